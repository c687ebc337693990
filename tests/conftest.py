"""Tests marked `gpu` need CuPy and a CUDA device; without them they are skipped with the reason."""

from __future__ import annotations

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
    """The repository commits measured H200 ceilings under profiles/; tests that do not ask for
    them (with --ceilings) must see the datasheet, whatever the working directory."""
    from nsprof.parse import sources

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sources, "CEILINGS_DIR", tmp_path_factory.mktemp("no-ceilings"))
        yield
