"""Every stage's CUDA source of every op compiles with `nvcc -arch=sm_90a` (skipped where nvcc is
absent), and every entry point is emitted. That target also builds plain compute_90 PTX, where
h6 compiles its wgmma entries to a trap."""

import shutil
import subprocess

import pytest

from nsprof.registry import all_stages

NVCC = shutil.which("nvcc")
NVRTC = [s for s in all_stages() if s.backend == "nvrtc"]


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("stage", NVRTC, ids=lambda s: s.key)
def test_compiles_for_sm90a(stage, tmp_path):
    result = subprocess.run(
        [NVCC, "-arch=sm_90a", "-std=c++17", "-Xptxas", "-v", "-c", str(stage.kernel_path()),
         "-o", str(tmp_path / "stage.o")],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    for tile in stage.tiles:  # every entry point was emitted
        assert f"Compiling entry function '{tile.entry}'" in result.stderr
