"""Every stage's CUDA source compiles for Hopper with nvcc (skipped where nvcc is absent)."""

import shutil
import subprocess

import pytest

from nsprof.registry import stages_for

NVCC = shutil.which("nvcc")
NVRTC = [s for s in stages_for("sgemm") if s.backend == "nvrtc"]


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("stage", NVRTC, ids=lambda s: s.stage)
def test_compiles_for_sm90(stage, tmp_path):
    result = subprocess.run(
        [NVCC, "-arch=sm_90", "-std=c++17", "-Xptxas", "-v", "-c", str(stage.kernel_path()),
         "-o", str(tmp_path / "stage.o")],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    for tile in stage.tiles:  # every entry point was emitted
        assert f"Compiling entry function '{tile.entry}'" in result.stderr
