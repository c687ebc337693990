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
    plan: LaunchPlan | None  # None for library calls
    padded_shape: tuple[int, int, int] | None  # None when the kernel runs on A, B, C directly

    @property
    def tile_label(self) -> str:
        if self.plan is None:
            return "library"
        t = self.plan.tile
        split = f"/split{self.plan.split_k}" if self.plan.split_k > 1 else ""
        return f"{t.bm}x{t.bn}x{t.bk}{split}"


@dataclass(frozen=True)
class LaunchPlan:
    tile: Tile
    split_k: int = 1


def choose_plan(stage: Stage, m: int, n: int, k: int, sm_count: int,
                forced_tile: str | None = None, forced_split: int | None = None) -> LaunchPlan:
    """Pick the block tile (and split-K factor) that keeps every SM busy.

    In registry order (largest tile first), take the first tile that yields at least one
    block per SM on its own, or with a split of K that the tile allows (each slice at least
    32 tiles of K deep). Otherwise fall back to the smallest tile. `forced_tile` ("64x128")
    and `forced_split` override the choice, for tuning runs.
    """
    if forced_tile:
        tiles = [t for t in stage.tiles if t.shape == forced_tile]
        if not tiles:
            shapes = ", ".join(t.shape for t in stage.tiles)
            raise UsageError(f"stage {stage.stage} has no {forced_tile} tile", f"choose one of: {shapes}")
        if forced_split is not None:
            return LaunchPlan(tiles[0], forced_split)
    else:
        tiles = list(stage.tiles)
    for tile in tiles:
        blocks = math.ceil(m / tile.bm) * math.ceil(n / tile.bn)
        split = 1
        while blocks * split < sm_count and split * 2 <= tile.max_split_k and k >= split * 2 * 32 * tile.bk:
            split *= 2
        if blocks * split >= sm_count or tile is tiles[-1]:
            return LaunchPlan(tile, split)
    raise AssertionError("unreachable: the last tile always returns")


def _round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


def make_launcher(stage: Stage, problem: SgemmProblem, sm_count: int, tile_shape: str | None = None,
                  split_k: int | None = None, defines: tuple[str, ...] = ()) -> Launcher:
    cp = problem.cp
    m, n, k = problem.m, problem.n, problem.k
    if stage.backend == "cublas":
        return Launcher(lambda: cp.matmul(problem.A, problem.B, out=problem.C), None, None)

    plan = choose_plan(stage, m, n, k, sm_count, tile_shape, split_k)
    tile, split = plan.tile, plan.split_k
    kernel = load_kernel(stage, tile, defines)
    if stage.ragged == "pad":
        mp, np_, kp = _round_up(m, tile.bm), _round_up(n, tile.bn), _round_up(k, tile.bk * split)
    else:
        mp, np_, kp = m, n, k
    if max(mp * kp, kp * np_, mp * np_) > INT32_MAX:
        raise UsageError(
            f"{m}x{n}x{k} is too large for {stage.stage}: its kernels index with 32-bit ints",
            "use matrices with fewer than 2^31 elements each",
        )
    grid = (math.ceil(np_ / tile.bn), math.ceil(mp / tile.bm), split)
    block = (tile.threads[0], tile.threads[1], 1)

    def launch(a, b, c, mm, nn, kk):
        if split > 1:
            c.fill(0)  # the K slices add their partial sums into C
        kernel(grid, block, (np.int32(mm), np.int32(nn), np.int32(kk), a, b, c),
               shared_mem=tile.dynamic_smem_bytes)

    if (mp, np_, kp) == (m, n, k):
        return Launcher(lambda: launch(problem.A, problem.B, problem.C, m, n, k), plan, None)

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

    return Launcher(run_padded, plan, (mp, np_, kp))
