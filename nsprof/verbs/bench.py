"""`bench`: verify, then time, each stage at each size, and what the ladder declares (`stages`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nsprof.paths import PROFILES_DIR
from nsprof.verbs.common import check_runs, path_or_none, workload_argv

if TYPE_CHECKING:  # loaded with the calls that need them: `nsprof --help` stays fast
    from nsprof.ceilings.peaks import Ceiling
    from nsprof.ladder.op_model import Op


@dataclass
class BenchRun:
    """What `bench` measured: the results document (what --json prints and the saved file holds:
    env, results), the DRAM ceiling that records' pct_dram is of (ops whose headline is bytes),
    and the files written."""

    document: dict
    dram_ceiling: Ceiling | None
    written: list[Path]

    @property
    def records(self) -> list[dict]:
        """One record per stage and size (nsprof.ladder_runs.bench), baselines included."""
        return self.document["results"]

    @property
    def failed(self) -> bool:
        return any(r["status"] in ("failed", "error") for r in self.records)


def bench(stages: list[str] | None = None, sizes: list[str] | None = None, op: str = "sgemm", *,
          repeat: int | None = None, warmup: int | None = None, baseline: bool = True, tile: str | None = None,
          out: str | Path | None = None, save_as: str | Path | None = None, force: bool = False,
          tuned: str | Path | None = None, progress: Callable[[str], None] | None = None, runs: int = 1,
          paired: bool = True, cold_inputs: bool = True, back_to_back: bool = False) -> BenchRun:
    """Verify, then time, each stage at each size (GPU), with the baselines of their precisions
    (`baseline`) for % of the library, measured with the launches in turn where `paired`
    (nsprof.ladder_runs.bench.pair_with_library), each launch on cold inputs where `cold_inputs`
    (nsprof.launch.rotation), and in chains too where `back_to_back` (nsprof.launch.back_to_back); `tile` forces a
    block tile; `tuned`, a bench record whose
    kept Triton configurations are reused instead of tuning again; `runs` > 1 repeats it all in
    fresh processes (nsprof.ladder_runs.bench_runs). The results are saved to
    OUT/bench-<op>-<time>.json with `out`, or to `save_as` (replaced only where nsprof wrote it,
    or with `force`); a file in the way is found before any GPU work."""
    from nsprof.ceilings.resolve import resolve_ceiling
    from nsprof.ladder.registry import get_op, select_stages
    from nsprof.ladder_runs.bench import (
        add_pct_dram,
        check_output,
        check_tile,
        kept_configurations,
        results_document,
        run_bench,
        save_results,
    )
    from nsprof.sizes import parse_sizes, size_label

    check_runs(runs)
    if back_to_back and not paired:
        from nsprof.errors import UsageError

        raise UsageError("--back-to-back times the stages against the library in turn, which --no-paired leaves out",
                         "leave out --no-paired")
    chosen = select_stages(op, stages)
    parsed = parse_sizes(sizes, get_op(op).dims)
    check_tile(chosen, tile)
    save = out is not None or save_as is not None
    directory = Path(out) if out is not None else PROFILES_DIR
    since = check_output(directory, path_or_none(save_as), force) if save else None
    kept = kept_configurations(Path(tuned)) if tuned is not None else {}
    env, no_gpu = _bench_env(chosen, runs)  # fails early, in one line, where only GPU stages were chosen
    if runs > 1:
        from nsprof.ladder_runs.bench_runs import merged, run_in_fresh_processes

        argv = workload_argv("bench", {"stages": [s.stage for s in chosen], "sizes": [size_label(s) for s in parsed],
                                       "op": op, "repeat": repeat, "warmup": warmup, "baseline": baseline, "tile": tile,
                                       "tuned": None if tuned is None else str(tuned), "paired": paired,
                                       "cold_inputs": cold_inputs, "back_to_back": back_to_back})
        document = merged(run_in_fresh_processes(argv, runs, progress or (lambda message: None)))
        records = document["results"]
    else:
        records = run_bench(op, chosen, parsed, repeat=repeat, warmup=warmup, baseline=baseline, tile=tile, kept=kept,
                            progress=progress, paired=paired, no_gpu=no_gpu, cold_inputs=cold_inputs,
                            back_to_back=back_to_back)
        document = results_document(records, env, cold_inputs)
    # CPU stages alone name no GPU, so no GPU's ceilings
    ceiling = resolve_ceiling(env["device"]) if get_op(op).headline == "bytes" and "device" in env else None
    add_pct_dram(records, ceiling)
    written = [save_results(document, directory, path_or_none(save_as), force, since)] if save else []
    return BenchRun(document, ceiling, written)


def _bench_env(chosen: list, runs: int = 1) -> tuple[dict, str | None]:
    """The machine a bench record names: the GPU (device_info) where a GPU stage was chosen, and
    the host's CPU (cpu_stage.host_info) where a CPU stage was; and why the GPU stages cannot run
    where CPU stages were chosen beside them and there is no usable GPU (None where they can).
    GpuUnavailableError where only GPU stages were chosen, or runs in fresh processes were asked."""
    from nsprof.errors import GpuUnavailableError

    env: dict = {}
    no_gpu = None
    if any(not stage.kind.on_host for stage in chosen):
        from nsprof.launch.gpu import device_info

        try:
            env.update(device_info())
        except GpuUnavailableError as err:
            if runs > 1 or all(not stage.kind.on_host for stage in chosen):
                raise
            no_gpu = err.problem
    if any(stage.kind.on_host for stage in chosen):
        from nsprof.ladder_runs.cpu_stage import host_info

        env.update(host_info())
    return env, no_gpu


def stages(op: str = "sgemm") -> Op:
    """The ladder `op` as the registry declares it: its stages, precisions, baselines, formulas."""
    from nsprof.ladder.registry import get_op

    return get_op(op)
