"""The bench table: `nsprof bench`'s records as a rich table, with the caption that says what its
rates are. What the op declares says it (nsprof.ladder.op_model.Op: headline, min_bytes_rule, library), so
a new ladder's table needs no change here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypeGuard

from rich.table import Table

from nsprof.ladder.registry import get_op
from nsprof.ladder_runs.bench import PAIRED
from nsprof.ladder_runs.bench_types import SassCounts, StageDetails
from nsprof.launch.rotation import ROTATE_BELOW_L2S
from nsprof.render import format as fmt
from nsprof.render.document import Table as DocumentTable
from nsprof.render.terminal_table import terminal_table

if TYPE_CHECKING:
    from nsprof.ladder.op_model import Op

STATUS = {"ok": "ok", "failed": "FAILED", "error": "ERROR"}
# left out in this order where the terminal is too narrow: the title and the tile are in
# `nsprof stages` and --json, the error and the spread in --json
DROP_ORDER = ("title", "tile", "torch_ms", "rel_error", "spread_pct", "speedup_vs_cpu_blas")
# shown only where some record has them (no PyTorch, no CPU stage: nothing but dashes)
OPTIONAL = ("torch_ms", "pct_cublas_back_to_back", "speedup_vs_cpu_loop", "speedup_vs_cpu_blas")


def results_table(records: list[dict], env: dict, dram_ceiling=None, width: int = 160) -> Table:
    """The records as a table `width` columns wide (nsprof.render.terminal_table: titles wrap at
    spaces; sizes, tiles and numbers stay whole; DROP_ORDER's columns go first, named in the
    caption). `dram_ceiling`: the Ceiling that % DRAM is of (nsprof.ladder_runs.bench.add_pct_dram)."""
    op = get_op(records[0]["op"]) if records else None
    library = op.library if op else "cuBLAS"
    reversed_order = set(map(id, paired_against_medians(records)))
    rows = [{**r, "status": STATUS.get(r["status"], r["status"]),  # a baseline timed only for % cuBLAS says so
             "stage": r["stage"] + (" (baseline)" if r.get("baseline_only") else ""),
             "pct_cublas_shown": fmt.share(r.get("pct_cublas")) + ("*" if id(r) in reversed_order else "")}
            for r in records]
    notes = _record_notes(records) + _reading_notes(records, env, op, library, dram_ceiling, bool(reversed_order))
    title = machine_title(env)
    return terminal_table(DocumentTable(title, _columns(records, op, library), rows, "; ".join(notes) or None, DROP_ORDER,
                                whole=("size", "tile", "status")), width)


def _columns(records: list[dict], op: Op | None, library: str) -> list[tuple]:
    """The table's columns: the op's rates (an op judged by bytes leads with its bandwidth), and
    OPTIONAL's only where some record has them."""
    tflops = ("TFLOP/s", "tflops", _tflops)
    rates = [("GB/s", "tbytes_per_s", _gbytes), ("% DRAM", "pct_dram", ".0f"), tflops] if _by_bytes(op) else [tflops]
    columns = [("stage", "stage", ""), ("title", "title", ""), ("size", "size", ""), ("tile", "tile", ""),
               ("status", "status", ""), ("median ms", "median_ms", ".4f"), ("spread", "spread_pct", fmt.percent),
               ("torch ms", "torch_ms", ".4f"),
               *rates, (f"% {library}", "pct_cublas_shown", ""),
               (f"% {library}\nback to\nback", "pct_cublas_back_to_back", fmt.share),
               ("x CPU\nloop", "speedup_vs_cpu_loop", fmt.speedup),
               ("x CPU\nBLAS", "speedup_vs_cpu_blas", fmt.speedup), ("rel. error", "rel_error", ".1e")]
    return [c for c in columns if c[1] not in OPTIONAL or any(r.get(c[1]) is not None for r in records)]


def _by_bytes(op: Op | None) -> TypeGuard[Op]:
    """Whether the op is judged by the bytes it moves (its headline), not its FLOPs."""
    return op is not None and op.headline == "bytes"


def _gbytes(tbytes: float) -> str:
    """TB/s as GB/s, one unit for bandwidth everywhere."""
    return fmt.bytes_per_s(tbytes * 1e12, unit=False)


def _tflops(value: float) -> str:
    """TFLOP/s without the unit (the heading names it)."""
    return fmt.flops_per_s(value * 1e12, unit=False)


def _record_notes(records: list[dict]) -> list[str]:
    """What single records need said: why one is not ok ("not available", "skipped"), work timed
    apart or included, and a Triton stage's tuning."""
    notes = _status_notes(records)
    notes += [f"{r['stage']} {r['size']}: {r['prepare']} {r['prepare_ms']:.4f} ms, timed apart"
              for r in records if r.get("prepare_ms") is not None]
    notes += [f"{r['stage']} {r['size']}: includes {name} {ms:.4f} ms"
              for r in records if r.get("steps_ms") for name, ms in r["steps_ms"].items()]
    return notes + [tuning_note(r) for r in records if r.get("details")]


def _reading_notes(records: list[dict], env: dict, op: Op | None, library: str, dram_ceiling,
                   reversed_order: bool) -> list[str]:
    """How to read the columns: what % of the library is of and how it was timed, the spread, a
    busy host, the bandwidth and the CPU speed-ups."""
    notes = [note for note in (baseline_note(records), torch_note(records)) if note]
    if any(r.get("pct_cublas_method") == PAIRED for r in records):
        notes.append(f"% {library} of GPU stages: their launches alternating with the faster "
                     "library's (ABAB), so that the clock moves both alike under the power limit; median ms: each timed alone")
    if any(r.get("pct_cublas_back_to_back") is not None for r in records):
        notes.append(f"% {library} back to back (--back-to-back): the same pair in chains of launches with no events "
                     "between, the two in turn; an event between two launches keeps a kernel from starting before the "
                     "one ahead ends, and within a chain each kernel meets the clock its own power draw allows")
    if reversed_order:
        notes.append(f"*: timed alone, the medians order the stage and {library} the other way round (each met the "
                     "clock its own power draw allows; in turn they met one clock)")
    if inputs := _inputs_note(records):
        notes.append(inputs)
    notes.append("spread: the interquartile range of the timed launches over their median")
    if busy := busy_host_note(records, env):
        notes.append(busy)
    if _by_bytes(op):
        notes.append(f"GB/s: {op.min_bytes_rule} bytes over the median time; % DRAM: of {_dram_source(dram_ceiling)}")
    if any(r.get("speedup_vs_cpu_loop") or r.get("speedup_vs_cpu_blas") for r in records):
        notes.append("x CPU loop, x CPU BLAS: how many times faster than the serial CPU loop and the CPU's BLAS at the "
                     "same size (the CPU stages on the wall clock, the GPU stages by CUDA events)")
    return notes


def _inputs_note(records: list[dict]) -> str | None:
    """Whether the GPU launches found their buffers in L2 (nsprof.launch.rotation); None for a record
    from before nsprof said."""
    sets = [r["input_sets"] for r in records if r.get("input_sets")]
    if not sets:
        return None
    if max(sets) == 1:
        return "inputs: every launch on one set of buffers (--warm-inputs, or too large for L2 to keep)"
    return (f"inputs: each launch on the next of up to {max(sets)} sets of its buffers (copies), none left in L2 "
            f"by a recent launch (one set where the problem is {ROTATE_BELOW_L2S} L2s or more)")


def machine_title(env: dict) -> str:
    """The GPU and the host's CPU a bench record ran on, as far as it names them."""
    parts = []
    if "device" in env:
        parts.append(f"{env['device']} (CC {env['compute_capability']}, {env['sm_count']} SMs), CuPy {env['cupy']}, "
                     f"CUDA {env['runtime_cuda']}")
    if "cpu" in env:
        parts.append(f"CPU: {env['cpu']} ({env['cpu_cores']} threads, {env.get('cpu_simd') or 'no known SIMD'}), "
                     f"{env.get('blas') or 'BLAS'}")
    return "; ".join(parts)


def _dram_source(ceiling) -> str:
    if ceiling is None or ceiling.dram_tbyte_per_s is None:
        return "no known ceiling"
    return f"{fmt.bytes_per_s(ceiling.dram_tbyte_per_s * 1e12)} ({ceiling.source_of('dram_tbyte_per_s')})"


def baseline_note(records: list[dict]) -> str | None:
    """'% cuBLAS: of v9 (cuBLAS) for fp32 stages, of v9t (cuBLAS TF32) for tf32 stages', when the
    records compare with more than one baseline (each precision with its own)."""
    pairs = dict.fromkeys((r["precision"], r["baseline"]) for r in records if r.get("baseline"))
    if len({baseline for _, baseline in pairs}) < 2:
        return None
    titles = {(r["op"], r["stage"]): r["title"] for r in records}
    op = records[0]["op"]
    return f"% {get_op(op).library}: " + ", ".join(
        f"of {baseline} ({titles.get((op, baseline), baseline)}) for {precision} stages" for precision, baseline in pairs)


def torch_note(records: list[dict]) -> str | None:
    """Where PyTorch's product beat the library stage, so that % cuBLAS is of PyTorch's time
    there (nsprof.ladder_runs.bench._add_pct_cublas): 'torch ms: torch.mm on the same arrays; % cuBLAS
    of torch.mm where faster: v9t 4096x4096x4096'."""
    timed = [r for r in records if r.get("torch_call")]
    if not timed:
        return None
    faster = [f"{r['stage']} {r['size']}" for r in timed if r.get("pct_cublas_of") == r["torch_call"]]
    calls = " or ".join(dict.fromkeys(r["torch_call"] for r in timed))
    note = f"torch ms: {calls} on the same arrays, verified and timed alike"
    missing = dict.fromkeys(r["torch_message"] for r in timed if r.get("torch_message"))
    note += "".join(f" ({message})" for message in missing)
    return note + (f"; % {get_op(timed[0]['op']).library} is of {calls} where it was faster: {', '.join(faster)}"
                   if faster else "")


def tuning_note(record: dict) -> str:
    """A Triton stage's tuning and what it compiled to (nsprof.ladder_runs.triton_stage): 'v12t 4096^3:
    kept 128x256x32 w8 s3 of 5 tried (5 verified, the fastest; tuning never timed as the stage),
    168 registers, 0 spills, 192 KB shared; SASS: 512 HGMMA (wgmma), 64 UTMALDG (TMA)'."""
    details: StageDetails = record["details"]
    tuning, compiled = details["autotune"], details.get("compiled")
    verified = sum(trial["status"] == "ok" for trial in tuning["trials"])
    in_turn = sum("in_turn_ms" in trial for trial in tuning["trials"])  # the finalists (nsprof.ladder_runs.tuning)
    fastest = f"the fastest of {in_turn} timed in turn" if in_turn else "the fastest"
    text = (f"{record['stage']} {record['size']}: kept {tuning['kept']} of {len(tuning['trials'])} tried ({verified} "
            f"verified, {fastest}; tuning never timed as the stage)")
    if compiled is None:  # a library stage: its candidates are cuBLAS's algorithms
        return text
    text += (f", {compiled['registers']} registers, {compiled['spills']} spills, "
             f"{(compiled['shared_bytes'] or 0) / 1024:.0f} KB shared")
    sass = compiled.get("sass")
    if sass:
        counts = sass_counts(sass)
        text += "; SASS: " + (", ".join(counts) if counts else "none of " + ", ".join(SASS_WORDS.values()))
    return text


SassWord = Literal["wgmma", "mma_sync", "tma_load", "cp_async", "ffma"]
SASS_WORDS: dict[SassWord, str] = {  # what says which path the kernel took
    "wgmma": "HGMMA (wgmma)", "mma_sync": "HMMA (mma.sync)", "tma_load": "UTMALDG (TMA)",
    "cp_async": "LDGSTS (cp.async)", "ffma": "FFMA"}


def sass_counts(sass: SassCounts | None) -> list[str]:
    """How many of each of SASS_WORDS's instructions a Triton kernel's SASS holds ("512 HGMMA (wgmma)"), those it
    holds none of left out; none where its SASS was not read."""
    return [f"{sass[name]:,} {word}" for name, word in SASS_WORDS.items() if sass and sass.get(name)]


def _status_notes(records: list[dict]) -> list[str]:
    """Why each record that is not ok is not, once per reason: "v1, v2 512x512x512: <why>"."""
    by_reason: dict[str, dict[str, list[str]]] = {}
    for record in records:
        if record["status"] != "ok":
            by_reason.setdefault(str(record["message"]), {}).setdefault(record["size"], []).append(record["stage"])
    return ["; ".join(f"{', '.join(stages)} {size}" for size, stages in sizes.items()) + f": {reason}"
            for reason, sizes in by_reason.items()]


def paired_against_medians(records: list[dict]) -> list[dict]:
    """The records whose % of the library, measured in turn (PAIRED), says the stage is faster (or
    slower) than the library while their medians timed alone say the opposite, each as the table
    rounds it (104 against 97): two numbers a reader compares in one row must not contradict each
    other without a word. The library's own row is left out (its % is against PyTorch's call)."""
    by_key = {(r["op"], r["stage"], r["size"]): r for r in records if r["status"] == "ok"}
    found = []
    for r in records:
        base = by_key.get((r["op"], r.get("baseline"), r["size"]))
        if r.get("pct_cublas_method") != PAIRED or r.get("pct_cublas") is None or not r.get("median_ms") \
                or base is None or base is r:
            continue
        library_ms = base.get("torch_ms") if r.get("pct_cublas_of") == base.get("torch_call") else base.get("median_ms")
        if not library_ms:
            continue
        paired, apart = round(r["pct_cublas"]), round(100 * library_ms / r["median_ms"])
        if (paired - 100) * (apart - 100) < 0:
            found.append(r)
    return found


BUSY_SHARE = 0.5  # other work on at least this share of the host's cores makes it busy
WIDE_SPREAD_PCT = 25.0  # a CPU stage's launches spread wider than this were disturbed


def busy_host_note(records: list[dict], env: dict) -> str | None:
    """A warning where the CPU stages' wall-clock times cannot be trusted as the CPU's: the host had
    other work before they ran (its load average, less this process), or a CPU stage's timed runs
    spread wide. None on a quiet host."""
    cpu = [r for r in records if r.get("cpu_role") and r["status"] == "ok"]
    if not cpu:
        return None
    load, cores = env.get("host_load"), env.get("cpu_cores") or 0
    others = max(0.0, load - 1) if isinstance(load, (int, float)) else 0.0
    loaded = bool(cores) and others >= BUSY_SHARE * cores
    wide = [f"{r['stage']} {r['size']} {r['spread_pct']:.0f}%" for r in cpu
            if (r.get("spread_pct") or 0) > WIDE_SPREAD_PCT]
    if not loaded and not wide:
        return None
    why = [f"load average {load:.1f} on {cores} cores before they ran" if loaded else "",
           f"spread {', '.join(wide)}" if wide else ""]
    return (f"warning: the host was busy ({'; '.join(w for w in why if w)}): the CPU stages' times may be several "
            "times an idle host's; time them again on a quiet host")
