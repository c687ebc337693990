"""SGEMM problems on the GPU: random inputs, the float64 reference, and stage launchers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from nsprof.errors import UsageError
from nsprof.launch.compile import load_kernel
from nsprof.launch.gpu import require_cupy
from nsprof.registry import Stage, Tile

INT32_MAX = 2**31 - 1


class SgemmProblem:
    """A, B (random normal float32), C (the output buffer) and a lazily computed reference."""

    def __init__(self, m: int, n: int, k: int, seed: int = 0):
        self.cp = require_cupy()
        self.m, self.n, self.k = m, n, k
        self.seed = seed
        self.C = self.cp.empty((m, n), dtype=self.cp.float32)
        self.refresh()

    def refresh(self) -> None:
        """Draw fresh inputs so every verification sees data no earlier stage was tuned on."""
        rng = self.cp.random.default_rng(self.seed)
        self.seed += 1
        self.A = rng.standard_normal((self.m, self.k), dtype=self.cp.float32)
        self.B = rng.standard_normal((self.k, self.n), dtype=self.cp.float32)
        self._reference = None

    def reference(self):
        if self._reference is None:
            f64 = self.cp.float64
            self._reference = self.cp.matmul(self.A.astype(f64), self.B.astype(f64))
        return self._reference

    def poison_output(self) -> None:
        self.C.fill(np.nan)

    def relative_error(self) -> float:
        """||C - ref||_F / ||ref||_F in float64; NaN anywhere in C gives NaN."""
        ref = self.reference()
        diff = self.C.astype(self.cp.float64) - ref
        return float(self.cp.linalg.norm(diff) / self.cp.linalg.norm(ref))


@dataclass
class Launcher:
    """One ready-to-call launch of a stage on a problem (padding included, if any)."""

    run: Callable[[], None]
    tile: Tile | None
    padded_shape: tuple[int, int, int] | None  # None when the kernel runs on A, B, C directly

    @property
    def tile_label(self) -> str:
        return f"{self.tile.bm}x{self.tile.bn}x{self.tile.bk}" if self.tile else "library"


def choose_tile(stage: Stage, m: int, n: int, sm_count: int, forced: str | None = None) -> Tile:
    """The largest block tile that still gives every SM a block; else the smallest tile.

    `forced` ("64x128") picks a tile by its shape, for tuning runs.
    """
    if forced:
        for tile in stage.tiles:
            if forced == f"{tile.bm}x{tile.bn}":
                return tile
        shapes = ", ".join(f"{t.bm}x{t.bn}" for t in stage.tiles)
        raise UsageError(f"stage {stage.stage} has no {forced} tile", f"choose one of: {shapes}")
    for tile in stage.tiles:
        if math.ceil(m / tile.bm) * math.ceil(n / tile.bn) >= sm_count:
            return tile
    return stage.tiles[-1]


def _round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


def make_launcher(stage: Stage, problem: SgemmProblem, sm_count: int,
                  tile_shape: str | None = None, defines: tuple[str, ...] = ()) -> Launcher:
    cp = problem.cp
    m, n, k = problem.m, problem.n, problem.k
    if stage.backend == "cublas":
        return Launcher(lambda: cp.matmul(problem.A, problem.B, out=problem.C), None, None)

    tile = choose_tile(stage, m, n, sm_count, tile_shape)
    kernel = load_kernel(stage, tile, defines)
    if stage.ragged == "pad":
        mp, np_, kp = _round_up(m, tile.bm), _round_up(n, tile.bn), _round_up(k, tile.bk)
    else:
        mp, np_, kp = m, n, k
    if max(mp * kp, kp * np_, mp * np_) > INT32_MAX:
        raise UsageError(
            f"{m}x{n}x{k} is too large for {stage.stage}: its kernels index with 32-bit ints",
            "use matrices with fewer than 2^31 elements each",
        )
    grid = (math.ceil(np_ / tile.bn), math.ceil(mp / tile.bm), 1)
    block = (tile.threads[0], tile.threads[1], 1)

    def launch(a, b, c, mm, nn, kk):
        kernel(grid, block, (np.int32(mm), np.int32(nn), np.int32(kk), a, b, c),
               shared_mem=tile.dynamic_smem_bytes)

    if (mp, np_, kp) == (m, n, k):
        return Launcher(lambda: launch(problem.A, problem.B, problem.C, m, n, k), tile, None)

    # Zero padding on the device: the pad regions stay zero, only the interior is copied
    # per launch; the copies are part of the stage's timed work.
    a_pad = cp.zeros((mp, kp), dtype=cp.float32)
    b_pad = cp.zeros((kp, np_), dtype=cp.float32)
    c_pad = cp.full((mp, np_), np.nan, dtype=cp.float32)

    def run_padded():
        a_pad[:m, :k] = problem.A
        b_pad[:k, :n] = problem.B
        launch(a_pad, b_pad, c_pad, mp, np_, kp)
        problem.C[...] = c_pad[:m, :n]

    return Launcher(run_padded, tile, (mp, np_, kp))
