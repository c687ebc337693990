"""What a capture needs besides the request: NVTX in Python, permission to read the GPU's
performance counters, and (for `nsprof doctor`) every prerequisite in one list of checks."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata

from typing_extensions import TypedDict  # pydantic reads it for docs/json (typing's, only from Python 3.12)

from nsprof import metric_catalog
from nsprof.capture.output import PERMISSION_ERROR, PERMISSION_FIX
from nsprof.capture.tools import FoundTool, locate_tool
from nsprof.errors import NsprofError
from nsprof.launch import gpu
from nsprof.ncu_log import NO_KERNELS, parse_profiling_line

PROBE_METRIC = metric_catalog.requested("duration_ns")  # every GPU and ncu version has it
NVTX_FIX = "Install it with pip install nvtx (without it the workload emits no NVTX ranges to filter on)"
# One tiny CuPy kernel: the least work that makes ncu read a counter.
_PROBE = "import cupy; cupy.ones(256).sum(); cupy.cuda.Device().synchronize()"


def nvtx_version() -> str | None:
    try:
        import nvtx  # noqa: F401  (importable is what the workload needs)
    except ImportError:
        return None
    try:
        return metadata.version("nvtx")  # the package has no __version__
    except metadata.PackageNotFoundError:
        return "installed"


def require_nvtx() -> None:
    if nvtx_version() is None:
        raise NsprofError("the Python package nvtx is not installed", NVTX_FIX)


def probe_counters(ncu: str, timeout_s: float = 90) -> tuple[bool | None, str]:
    """Profile one tiny kernel with one metric: (True, detail) if ncu read it, (False, detail) on
    ERR_NVGPUCTRPERM, (None, detail) when the probe itself went wrong."""
    argv = [ncu, "--clock-control", "none", "--launch-count", "1", "--metrics", PROBE_METRIC,
            sys.executable, "-c", _PROBE]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"the probe under ncu did not finish within {timeout_s:g} s"
    except OSError as err:
        return None, f"could not run {ncu} ({err})"
    text = done.stdout + done.stderr
    if PERMISSION_ERROR in text:
        return False, f"{PERMISSION_ERROR}: not permitted for this user"
    if any(parse_profiling_line(line) for line in text.splitlines()) and NO_KERNELS not in text:
        return True, f"ncu read {PROBE_METRIC} of a test kernel"
    last = next((line for line in reversed(text.strip().splitlines()) if line.strip()), "no output")
    return None, f"ncu exited with code {done.returncode}: {last.strip()[:120]}"


class Check(TypedDict):
    """One check of `nsprof doctor` (its --json prints a list of them; docs/json/doctor.schema.json)."""

    check: str
    status: str  # ok, missing, unknown, or skipped (something it needs is missing)
    detail: str
    fix: str | None  # what to do, where it is not ok


def _check(name: str, status: str, detail: str, fix: str | None = None) -> Check:
    return {"check": name, "status": status, "detail": detail, "fix": fix}


def environment_checks(nsys: str | None = None, ncu: str | None = None) -> list[Check]:
    """Everything `nsprof profile --tool both` needs, each "ok", "missing", "unknown" or "skipped"
    (not checked because something it needs is missing)."""
    checks = []
    try:
        checks.append(_check("CuPy", "ok", gpu.cupy_version()))
    except NsprofError:  # its own row says how to install it; the driver's row says whether a GPU is there
        checks.append(_check("CuPy", "missing", "CuPy is not installed", gpu.INSTALL_HINT))
    env = None
    if checks[-1]["status"] != "ok":
        checks.append(_check("GPU", "skipped", "needs CuPy"))
    else:
        try:
            env = gpu.device_info()
            checks.append(_check("GPU", "ok",
                                 f"{env['device']}, compute capability {env['compute_capability']}, {env['sm_count']} SMs"))
        except NsprofError as err:
            checks.append(_check("GPU", "missing", err.problem, err.fix))
    driver = env["driver"] if env else gpu.nvidia_driver_version()
    if env:
        checks.append(_check("driver / CUDA", "ok",
                             f"driver {driver or 'unknown'} (CUDA {env['driver_cuda']}), CUDA runtime {env['runtime_cuda']}"))
    elif driver:
        checks.append(_check("driver / CUDA", "ok", f"driver {driver}"))
    else:
        checks.append(_check("driver / CUDA", "missing", "nvidia-smi did not report a driver", "Install the NVIDIA driver"))
    version = nvtx_version()
    checks.append(_check("nvtx", "ok", version) if version else _check("nvtx", "missing", "not importable", NVTX_FIX))
    found = {}
    for name, option in (("nsys", nsys), ("ncu", ncu)):
        try:
            tool = found[name] = locate_tool(name, option)
            checks.append(_check(name, "ok", f"{tool.version} at {tool.path} (from {tool.found_by})"))
        except NsprofError as err:
            checks.append(_check(name, "missing", err.problem, err.fix))
    checks.append(_counters_check(env is not None, found.get("ncu")))
    return checks


def _counters_check(have_gpu: bool, ncu: FoundTool | None) -> Check:
    if not (have_gpu and ncu):
        return _check("GPU counters", "skipped", "needs a GPU and ncu")
    readable, detail = probe_counters(ncu.path)
    if readable:
        return _check("GPU counters", "ok", detail)
    if readable is False:
        return _check("GPU counters", "missing", detail, PERMISSION_FIX)
    return _check("GPU counters", "unknown", detail,
                  f"Try a kernel by hand: {ncu.path} --launch-count 1 python -c 'import cupy; cupy.ones(1).sum()'")
