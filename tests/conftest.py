"""Tests marked `gpu` need CuPy and a CUDA device; without them they are skipped with the reason.
The large real captures of tests/data and profiles/examples are unpacked beside their packed copies first (packed_data.py)."""

from __future__ import annotations

import lzma
import shutil
import signal
from pathlib import Path

import pytest


def _gpu_missing_reason() -> str | None:
    try:
        import cupy
    except ImportError:
        return "CuPy is not installed"
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            return "no CUDA device is visible"
    except Exception as err:  # no driver
        return f"no usable CUDA device ({str(err).splitlines()[0] if str(err) else type(err).__name__})"
    return None


def pytest_sessionstart(session):
    from packed_data import unpack  # tests/ is on sys.path for its conftest

    unpack()
    # Started with SIGINT ignored (`nohup pytest &`, some CI runners), the Ctrl-C tests would send
    # signals no one hears, and the nsprof processes the tests start would inherit the disposition:
    # the suite hears SIGINT as Python does by default, whatever started it.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if not gpu_items:
        return
    reason = _gpu_missing_reason()
    if reason:
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=f"needs a GPU: {reason}"))


@pytest.fixture(scope="session", autouse=True)
def no_measured_ceilings_by_default(tmp_path_factory):
    """Measured ceilings saved on this machine (nsprof's data directory) must not change what the
    tests see: they get an empty data directory. The committed examples still carry the H200's
    measured ceilings in their manifests."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NSPROF_DATA_DIR", str(tmp_path_factory.mktemp("no-ceilings")))
        yield


REAL_PROGRAMS = Path(__file__).parent / "data" / "real-programs"


@pytest.fixture(scope="session")
def real_program(tmp_path_factory):
    """A real capture of tests/data/real-programs (jax-a, jax-b, triton) as a profile directory:
    its files copied and its nsys.sqlite.xz unpacked, once a session per capture."""
    made: dict[str, Path] = {}

    def directory(name: str) -> Path:
        if name not in made:
            target = tmp_path_factory.mktemp(name)
            for source in (REAL_PROGRAMS / name).iterdir():
                if source.name.endswith(".xz"):
                    with lzma.open(source) as packed, open(target / source.name[:-3], "wb") as out:
                        shutil.copyfileobj(packed, out)
                elif source.is_dir():  # the program's Triton cache
                    shutil.copytree(source, target / source.name)
                else:
                    shutil.copyfile(source, target / source.name)
            made[name] = target
        return made[name]

    return directory


CPU_RUNG = Path(__file__).parent / "data" / "cpu-rung"
CPU_RUNG_CAPTURES = {"sgemm-1024": "h200-sgemm-1024", "sgemv-4096": "h200-sgemv-4096"}


@pytest.fixture(scope="session")
def cpu_rung_capture(tmp_path_factory):
    """A ladder capture with CPU stages beside it, as `nsprof profile` writes one: a committed example
    capture (profiles/examples/h200-sgemm-1024 or h200-sgemv-4096) with the bench-cpu.json and
    ceilings-cpu.json of tests/data/cpu-rung/<name>: real runs of the CPU stages and of
    `nsprof ceilings --cpu` on a GPU-less host like CI's (its CPU, not the GPU machine's host)."""
    made: dict[str, Path] = {}

    def directory(name: str) -> Path:
        if name not in made:
            target = tmp_path_factory.mktemp(name) / name
            shutil.copytree(Path(__file__).parents[1] / "profiles" / "examples" / CPU_RUNG_CAPTURES[name], target)
            for source in (CPU_RUNG / name).iterdir():
                shutil.copyfile(source, target / source.name)
            made[name] = target
        return made[name]

    return directory
