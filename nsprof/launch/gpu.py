"""Access to CuPy and the GPU, with one-line errors when either is missing."""

from __future__ import annotations

import os
import platform
import subprocess

from nsprof.errors import GpuUnavailableError

INSTALL_HINT = ("Install CuPy for your CUDA major version: pip install cupy-cuda13x (or cupy-cuda12x); "
                "from a checkout, pip install -e \".[cuda13]\"")


NO_GPU_HINT = ("Run it on a machine with an NVIDIA GPU and its driver; here, analyze the captures in "
               "profiles/examples (nsprof analyze, report, explain, diff)")
DRIVER_FILE = "/proc/driver/nvidia/version"  # the NVIDIA kernel driver, loaded


def require_cupy():
    """Import CuPy and check that a CUDA device is visible."""
    try:
        import cupy
    except ImportError as err:
        raise _without_cupy(err) from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as err:  # CUDARuntimeError, missing driver library, ...
        if not os.path.exists(DRIVER_FILE):  # CUDA calls a missing driver "insufficient": say what is missing
            raise _no_driver() from None
        raise GpuUnavailableError(
            f"no CUDA GPU is usable ({_first_line(err)})",
            "Run on a machine with an NVIDIA GPU and driver, or analyze existing profiles with `nsprof analyze`",
        ) from None
    if count == 0:
        raise GpuUnavailableError(
            "no CUDA GPU is visible",
            "Check nvidia-smi and CUDA_VISIBLE_DEVICES, or analyze existing profiles with `nsprof analyze`",
        )
    return cupy


def cupy_version() -> str:
    """CuPy's version without touching the GPU; GpuUnavailableError when CuPy is not installed."""
    try:
        import cupy
    except ImportError as err:
        raise _without_cupy(err) from None
    return cupy.__version__


def _without_cupy(err: ImportError) -> GpuUnavailableError:
    """No CuPy: on a machine without an NVIDIA driver the GPU is what is missing, not the package."""
    if not os.path.exists(DRIVER_FILE):
        return _no_driver()
    return GpuUnavailableError(f"CuPy is not installed ({err})", INSTALL_HINT)


def _no_driver() -> GpuUnavailableError:
    return GpuUnavailableError(f"this command needs an NVIDIA GPU, and this machine has no NVIDIA driver "
                               f"({DRIVER_FILE} is missing)", NO_GPU_HINT)


def _first_line(err: Exception) -> str:
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0]


def cuda_include_dir() -> str | None:
    """NVRTC needs -I<cuda>/include for <mma.h> (without it: 'catastrophic error')."""
    import cupy

    candidates = [os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), cupy.cuda.get_cuda_path(), "/usr/local/cuda"]
    for root in candidates:
        if root and os.path.isfile(os.path.join(root, "include", "mma.h")):
            return os.path.join(root, "include")
    return None


def device_info() -> dict:
    """What a result needs to be reproducible: the device, its clocks and the software stack."""
    cupy = require_cupy()
    dev = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]

    def _version(v: int) -> str:
        return f"{v // 1000}.{(v % 1000) // 10}"

    clock_khz = props.get("clockRate") or cupy.cuda.runtime.deviceGetAttribute(13, dev.id)  # cudaDevAttrClockRate
    smi = _nvidia_smi("driver_version,pci.bus_id,uuid")
    return {
        "device": name,
        "compute_capability": f"{props['major']}.{props['minor']}",
        "sm_count": props["multiProcessorCount"],
        "sm_clock_max_mhz": clock_khz // 1000,
        "memory_gib": round(props["totalGlobalMem"] / 2**30, 1),
        "l2_mib": round(props.get("l2CacheSize", 0) / 2**20, 1),
        "driver": smi[0][0] if smi else nvidia_driver_version(),  # (the driver alone, where the card's fields fail)
        "uuid": card_uuid(smi, (props.get("pciDomainID"), props.get("pciBusID"), props.get("pciDeviceID"))),
        "driver_cuda": _version(cupy.cuda.runtime.driverGetVersion()),
        "runtime_cuda": _version(cupy.cuda.runtime.runtimeGetVersion()),
        "cupy": cupy.__version__,
        "python": platform.python_version(),
        "host": platform.node(),
    }


def nvidia_driver_version() -> str | None:
    """The display-driver version (e.g. 580.159.03), which the CUDA runtime does not report."""
    rows = _nvidia_smi("driver_version")
    return rows[0][0] if rows else None


def card_uuid(rows: list[list[str]], pci_address: tuple) -> str | None:
    """The UUID (GPU-...) of the card at `pci_address` (domain, bus, device), from nvidia-smi's rows of
    driver_version, pci.bus_id, uuid: it tells two cards of one model apart, which can differ by a few percent at
    some sizes (benchmarks/records/2026-11-30-h200-hgemm-pairs-maps). None where nvidia-smi does not list it."""
    for row in rows:
        if len(row) == 3 and _pci_address(row[1]) == pci_address:
            return row[2]
    return None


def _pci_address(bus_id: str) -> tuple[int, int, int] | None:
    """nvidia-smi's pci.bus_id, '00000000:3B:00.0', as (domain, bus, device): (0, 59, 0)."""
    try:
        domain, bus, device_function = bus_id.split(":")
        return int(domain, 16), int(bus, 16), int(device_function.split(".")[0], 16)
    except ValueError:
        return None


def _nvidia_smi(fields: str) -> list[list[str]]:
    """nvidia-smi's answer to --query-gpu=`fields`: a row of values a GPU; none where it cannot run."""
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [[cell.strip() for cell in line.split(",")] for line in out.splitlines() if line.strip()]

