"""CPU stages (nsprof.ladder.stage_kinds.CPU): the rung every seed ladder starts from, run on the host.

A CPU stage's file under kernels/ is C with one entry, `nsprof_cpu_product(M, N, K, a, b, out)`
(out = a.b, row-major; N = 1 for a matrix and a vector), compiled by the host's C compiler into a
shared library (cached by source, flags and machine) and called through ctypes. A CPU stage with
no file is the CPU's BLAS through NumPy (`numpy.matmul`). Every CPU stage works on NumPy arrays
(the op's problem made with NumPy), is verified against the float64 reference with a poisoned
output like every stage, and is timed on the wall clock (time.perf_counter) after warm-up: its
median and spread.

A CPU stage that would take long at a size is not run there: its rate at a small size (CALIBRATION)
gives an estimate, and past BUDGET_S the record says "skipped: would take about N s".
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from nsprof.errors import KernelBuildError
from nsprof.ladder.cpu_roles import CPU_LOOP, compile_flags, cpu_role
from nsprof.ladder.op_model import Stage
from nsprof.launch.measure import Timing

BUDGET_S = 20.0  # the most a CPU stage may take at one size (verification, warm-up and timed runs)
TARGET_S = 0.5  # timed runs fill about this much wall time, 3 to 50 of them
MIN_RUNS, MAX_RUNS = 3, 50


@dataclass(frozen=True)
class CpuLauncher:
    """A CPU stage's launch and what its record's tile column says of it (its BLAS or its threads)."""

    run: Callable[[], None]
    tile_label: str


def cpu_launcher(stage: Stage, call) -> CpuLauncher:
    """The stage's launch on the problem's current NumPy arrays (`call`: the op's LibraryCall)."""
    if stage.kernel_file is None:
        def blas() -> None:
            a, b, out = call.arrays()
            np.matmul(a, b, out=out)
        return CpuLauncher(blas, f"NumPy BLAS ({blas_name()})")
    function = compiled(str(stage.kernel_path()), compile_flags(stage)).nsprof_cpu_product
    function.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    function.restype = None
    m, n, k = call.shape

    def run() -> None:
        a, b, out = call.arrays()
        function(m, n, k, _pointer(a), _pointer(b), _pointer(out))

    return CpuLauncher(run, "1 thread" if cpu_role(stage) == CPU_LOOP else f"{os.cpu_count()} threads")


def time_wall(run: Callable[[], object], repeat: int | None = None, warmup: int | None = None) -> Timing:
    """Wall-clock times of `run` after `warmup` runs (default 1); with no `repeat`, as many runs as
    fill about TARGET_S (MIN_RUNS to MAX_RUNS), from the warm-up's time."""
    warm = []
    for _ in range(1 if warmup is None else warmup):
        start = time.perf_counter()
        run()
        warm.append(time.perf_counter() - start)
    if repeat is None:
        each = float(np.median(warm)) if warm else TARGET_S
        repeat = int(min(MAX_RUNS, max(MIN_RUNS, TARGET_S / max(each, 1e-9))))
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
    return Timing(times, len(warm))


def bench_cpu_stage(stage: Stage, size, problem, record: dict, *, repeat: int | None, warmup: int | None) -> dict:
    """A CPU stage's bench record at one size (`record`: nsprof.ladder_runs.bench's empty one): skipped
    where it would pass BUDGET_S, else verified, then timed on the wall clock."""
    from nsprof.ladder.registry import get_op

    op = get_op(stage.op)
    record.update(cpu_role=cpu_role(stage), tolerance=stage.tolerance(size))
    try:
        one_run_s = op.flops(size) / _rate(stage, size)
        runs = 1 + (1 if warmup is None else warmup) + (MIN_RUNS if repeat is None else repeat)
        if one_run_s * runs > BUDGET_S:
            record["status"] = "skipped"
            record["message"] = (f"skipped: would take about {seconds_text(one_run_s)} s a run ({runs} runs: verification, "
                                 f"warm-up, timing), more than {BUDGET_S:.0f} s")
            return record
        launcher = cpu_launcher(stage, op.workload.library_call(stage, problem))
    except KernelBuildError as err:
        record["status"], record["message"] = "error", str(err)
        return record
    record["tile"] = launcher.tile_label
    problem.refresh()
    problem.poison_output()
    launcher.run()
    error = problem.relative_error()
    record["rel_error"] = error
    if not error <= record["tolerance"]:
        record["status"], record["message"] = "failed", f"relative error {error:.3g} exceeds {record['tolerance']:.3g}"
        return record
    record.update(time_wall(launcher.run, repeat, warmup).summary(), status="ok")
    seconds = record["median_ms"] * 1e-3
    record["tflops"] = op.flops(size) / seconds / 1e12
    record["tbytes_per_s"] = op.min_bytes(size) / seconds / 1e12
    return record


CALIBRATION = 256  # each dimension at most this for the first run that estimates a CPU stage's rate
CALIBRATION_S = 0.05  # grown (each dimension doubled, up to the size asked for) until a run takes this long


_rates: dict[str, float] = {}


def _rate(stage: Stage, size) -> float:
    """The stage's FLOP/s, measured once a process on a small problem (each dimension at most
    CALIBRATION, doubled until a run takes CALIBRATION_S): what the estimate of a large size's time
    starts from. The growing matters for the fast stages: the 16-thread BLAS of an H100's host ran
    256^3 so far below its large-size rate that 4096^3 was skipped as "about 66 s a run"; it takes
    0.15 s."""
    if stage.key not in _rates:
        from nsprof.ladder.registry import get_op

        op = get_op(stage.op)
        small = tuple(min(dim, CALIBRATION) for dim in size)
        while True:
            problem = op.workload.problem(np, small)
            run = cpu_launcher(stage, op.workload.library_call(stage, problem)).run
            run()  # loads the library, touches the arrays
            start = time.perf_counter()
            run()
            seconds = time.perf_counter() - start
            bigger = tuple(min(dim, 2 * part) for dim, part in zip(size, small))
            if seconds >= CALIBRATION_S or bigger == small:
                break
            small = bigger
        _rates[stage.key] = op.flops(small) / max(seconds, 1e-9)
    return _rates[stage.key]


def host_info() -> dict:
    """The host as a CPU stage's record names it: its CPU model, logical cores, vector extensions
    (from /proc/cpuinfo where there is one) and the BLAS NumPy calls."""
    model, flags = platform.processor() or platform.machine(), set[str]()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                model = value.strip()
            elif key.strip() in ("flags", "Features") and not flags:
                flags = set(value.split())
    except OSError:
        pass
    simd = next((name for name in ("avx512f", "avx2", "avx", "sve", "asimd", "neon") if name in flags), None)
    return {"cpu": model, "cpu_cores": os.cpu_count(), "cpu_simd": simd, "blas": blas_name(),
            "compiler": _compiler_version(), "host_load": _load()}


def _load() -> float | None:
    """The host's 1-minute load average before the CPU stages run (this process counts as 1): a host
    busy with other work times the CPU stages slower, by up to 50x on 2 shared cores."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):  # no load average on this system
        return None


@cache
def blas_name() -> str:
    """The BLAS NumPy was built with (OpenBLAS, MKL, Accelerate), as numpy.show_config says it."""
    try:
        config = np.show_config(mode="dicts")
        return str(config["Build Dependencies"]["blas"]["name"])
    except Exception:  # an older NumPy: no dict mode
        return "BLAS"


def _compiler() -> str:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        raise KernelBuildError("no C compiler found for the CPU stages (cc, gcc or clang)",
                               "install one (apt install gcc), or set CC")
    return compiler


@cache
def _compiler_version() -> str | None:
    try:
        done = subprocess.run([_compiler(), "--version"], capture_output=True, text=True, timeout=30)
    except (KernelBuildError, OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.splitlines()
    return lines[0] if lines else None


@cache
def compiled(source: str, flags: tuple[str, ...]) -> ctypes.CDLL:
    """C `source` compiled with `flags` (without OpenMP where the compiler has none), loaded, from
    a cache of shared libraries keyed by the source, the flags and the machine."""
    from nsprof.paths import data_dir

    text = Path(source).read_bytes()
    key = hashlib.sha256(text + " ".join(flags).encode() + platform.machine().encode()
                         + host_info()["cpu"].encode()).hexdigest()[:16]
    library = data_dir() / "cpu-stages" / f"{Path(source).stem}-{key}.so"
    if not library.is_file():
        library.parent.mkdir(parents=True, exist_ok=True)
        _build(source, flags, library)
    return ctypes.CDLL(str(library))


def _build(source: str, flags: tuple[str, ...], library: Path) -> None:
    """Compile into a temporary file beside `library`, then move it into place whole."""
    partial = library.with_suffix(f".{os.getpid()}.tmp")
    for attempt in (flags, tuple(flag for flag in flags if flag != "-fopenmp")):  # no OpenMP: one core
        done = subprocess.run([_compiler(), *attempt, "-shared", "-fPIC", "-o", str(partial), source],
                              capture_output=True, text=True)
        if done.returncode == 0:
            partial.replace(library)
            return
    partial.unlink(missing_ok=True)
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    raise KernelBuildError(f"the C compiler could not build {source}: {last}", "check the compiler (CC) and the source")


def _pointer(array: np.ndarray) -> int:
    return array.ctypes.data


def seconds_text(seconds: float) -> str:
    """An estimate in seconds as the skip message prints it: whole seconds from 10 s, else 2 digits."""
    return f"{seconds:,.0f}" if seconds >= 10 else f"{seconds:.2g}"
