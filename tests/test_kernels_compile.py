"""Every stage's CUDA source of every op compiles with `nvcc -arch=sm_90a` (skipped where nvcc is
absent), and every entry point is emitted. That target also builds plain compute_90 PTX, where
h6 compiles its wgmma entries to a trap."""

import re
import shutil
import subprocess

import pytest

from nsprof.ladder.registry import all_stages
from nsprof.ladder.stage_kinds import NVRTC

NVCC = shutil.which("nvcc")
NVRTC_STAGES = [s for s in all_stages() if s.kind is NVRTC]


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("stage", NVRTC_STAGES, ids=lambda s: s.key)
def test_compiles_for_sm90a(stage, tmp_path):
    result = subprocess.run(
        [NVCC, "-arch=sm_90a", "-std=c++17", "-Xptxas", "-v", "-c", str(stage.kernel_path()),
         "-o", str(tmp_path / "stage.o")],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    for entry in (e for tile in stage.tiles for e in tile.entries):  # every entry point was emitted
        assert f"Compiling entry function '{entry}'" in result.stderr


def _ptxas_report(stderr: str) -> dict[str, str]:
    """ptxas -v's lines per entry function."""
    report, entry = {}, None
    for line in stderr.splitlines():
        if match := re.search(r"Compiling entry function '(\w+)'", line):
            entry = match[1]
        elif entry:
            report[entry] = report.get(entry, "") + line + "\n"
    return report


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_v8_large_tile_entries_spill_no_registers(tmp_path):
    """The tiles that run the large sizes fit their registers: 128x128 in 128 a thread (two blocks an SM),
    256x128 (8x16 outputs a thread) in 255, with stream-K's loop over the tiles a block's run touches."""
    from nsprof.ladder.registry import get_stage

    result = subprocess.run([NVCC, "-arch=sm_90", "-std=c++17", "-Xptxas", "-v", "-c",
                             str(get_stage("sgemm", "v8").kernel_path()), "-o", str(tmp_path / "v8.o")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report = _ptxas_report(result.stderr)
    for entry in ("sgemm_v8_128x128", "sgemm_v8_128x128_unchecked", "sgemm_v8_256x128", "sgemm_v8_256x128_unchecked"):
        assert "0 bytes spill stores, 0 bytes spill loads" in report[entry], report[entry]


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_v11_builds_elsewhere_with_its_gemm_entries_reduced_to_a_trap(arch, tmp_path):
    """Off sm_90a (no __CUDA_ARCH_FEAT_SM90_ALL) v11's GEMM entries compile to a trap and hold no wgmma; the
    launcher never runs them there (bench reports the stage "not available"); the transpose compiles anyway."""
    from nsprof.ladder.registry import get_stage

    ptx = tmp_path / "v11.ptx"
    result = subprocess.run([NVCC, f"-arch={arch}", "-std=c++17", "-ptx", str(get_stage("sgemm", "v11").kernel_path()),
                             "-o", str(ptx)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    text = ptx.read_text()
    gemm_entries = [name for name in re.findall(r"\.visible \.entry (\w+)\(", text) if "transpose" not in name]
    assert len(gemm_entries) >= 4  # 128x256, 128x128, 128x64 and the register-sourced rs_256x128
    assert "wgmma" not in text and "cp.async.bulk.tensor" not in text and text.count("trap;") == len(gemm_entries)
    assert "cvt.rna.tf32.f32" in text  # the transpose rounds B to TF32


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_the_padded_copies_kernel_compiles_with_an_entry_per_element_size(tmp_path):
    """kernels/common/copy_rows.cu, which the GEMM ladders copy operands and C through where they pad rows."""
    from nsprof.ladder.op_model import find_kernel
    from nsprof.ladder.ops.matmul import COPY_ROWS

    result = subprocess.run([NVCC, "-arch=sm_90", "-Xptxas", "-v", "-c", str(find_kernel(COPY_ROWS)),
                             "-o", str(tmp_path / "copy.o")], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert {"copy_rows_2", "copy_rows_4"} <= set(_ptxas_report(result.stderr))
