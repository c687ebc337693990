"""Cold inputs (nsprof.launch.rotation) on a real problem in host memory: how many sets a footprint gets, the
launches' turn through them, the problem's own buffers back in place after every queue and after a refresh.
The GPU side (the launches really write every set) is tests/test_gpu_stages.py's."""

from __future__ import annotations

import numpy as np
import pytest

from nsprof.ladder.ops.matmul import MatmulProblem
from nsprof.ladder.ops.sgemv import GemvProblem
from nsprof.launch.rotation import (
    COLD_L2S,
    MAX_SETS,
    ROTATE_BELOW_L2S,
    active_rotation,
    per_input_set,
    rotating_inputs,
    set_count,
)
from nsprof.render.bench_table import _inputs_note

L2 = 60 * 2**20  # an H200's, as CUDA reports it


def same(arrays, others) -> bool:
    return all(a is b for a, b in zip(arrays, others, strict=True))


def test_sets_cover_three_l2s_of_traffic_and_stop_where_the_problem_outgrows_l2():
    square_1024 = 3 * 1024 * 1024 * 2  # A, B and C in float16
    sets = set_count(square_1024, L2)
    assert (sets - 1) * square_1024 >= COLD_L2S * L2 > (sets - 2) * square_1024
    assert set_count(ROTATE_BELOW_L2S * L2 - 1, L2) == 2
    assert set_count(ROTATE_BELOW_L2S * L2, L2) == 1
    assert set_count(6, L2) == MAX_SETS  # 1 x 1 x 1: as many as allowed, still warm


def test_each_launch_moves_to_the_next_set_and_the_queue_ends_on_the_problems_own():
    problem = MatmulProblem(np, (64, 96, 32), "float16")
    own = (problem.A, problem.B, problem.C)
    footprint = sum(array.nbytes for array in own)
    with rotating_inputs(problem, l2_bytes=footprint) as rotation:  # 3 L2s: 1 + 3 sets
        assert active_rotation() is rotation and rotation.sets == 4
        seen = []
        for _ in range(2 * rotation.sets):
            rotation.step()
            seen.append(problem.A)
        assert seen[0] is own[0] and seen[rotation.sets] is own[0]
        assert seen[1:rotation.sets] == [copy[0] for copy in rotation.copies]
        assert all(np.array_equal(copy[0], own[0]) and copy[0] is not own[0] for copy in rotation.copies)
        rotation.restore()
        assert same((problem.A, problem.B, problem.C), own)
        problem.refresh()  # a stage's refresh between queues: the next queue starts on the new arrays
        rotation.step()
        assert problem.A is not own[0] and problem.A is not rotation.copies[0][0]
        rotation.step()
        assert problem.A is rotation.copies[0][0]
    assert active_rotation() is None
    assert problem.A is not own[0] and problem.A.shape == own[0].shape  # the refreshed own, not a copy


def test_the_problems_buffers_come_back_when_a_launch_fails():
    problem = GemvProblem(np, (128, 64))
    own = (problem.A, problem.x, problem.y)
    footprint = sum(array.nbytes for array in own)
    with pytest.raises(RuntimeError), rotating_inputs(problem, l2_bytes=footprint) as rotation:
        rotation.step()
        rotation.step()
        assert problem.x is not own[1]
        raise RuntimeError("a launch failed")
    assert same((problem.A, problem.x, problem.y), own)


def test_a_queue_goes_on_from_the_set_the_last_one_left():
    """Timings queue launches in chunks; a chunk shorter than the sets must not start over on the own set."""
    problem = MatmulProblem(np, (32, 32, 32), "float32")
    footprint = sum(getattr(problem, name).nbytes for name in problem.buffers)
    with rotating_inputs(problem, l2_bytes=footprint) as rotation:
        rotation.step()
        rotation.step()
        rotation.restore()
        rotation.step()
        assert problem.B is rotation.copies[1][1]


def test_a_launchers_own_buffer_follows_the_sets_and_a_refreshed_input_gets_the_own_one():
    """SGEMV's transposed A: one made per copy when the launcher is built, the launcher's own on the problem's set."""
    problem = GemvProblem(np, (48, 32))
    footprint = sum(getattr(problem, name).nbytes for name in problem.buffers)
    own = problem.A.T.copy()
    outside = per_input_set(problem, "A", own, lambda a: a.T.copy())
    with rotating_inputs(problem, l2_bytes=footprint) as rotation:
        made = []
        transposed_now = per_input_set(problem, "A", own, lambda a: made.append(a) or -a.T)
        assert [a is copy[0] for a, copy in zip(made, rotation.copies, strict=True)] == [True] * (rotation.sets - 1)
        seen = []
        for _ in range(rotation.sets):
            rotation.step()
            seen.append(transposed_now())
            assert outside() is own  # built with no rotation active: never moves
        assert seen[0] is own and all(np.array_equal(t, -problem.A.T) for t in seen[1:])
        assert len({id(t) for t in seen}) == rotation.sets
        rotation.restore()
        problem.refresh()
        assert transposed_now() is own
    other = GemvProblem(np, (48, 32))
    with rotating_inputs(other, l2_bytes=footprint):  # another problem's rotation: nothing made
        assert per_input_set(problem, "A", own, lambda a: pytest.fail("made for another problem"))() is own


def test_a_problem_of_four_l2s_keeps_one_set():
    problem = MatmulProblem(np, (64, 64, 64), "float32")
    footprint = sum(getattr(problem, name).nbytes for name in problem.buffers)
    with rotating_inputs(problem, l2_bytes=footprint // ROTATE_BELOW_L2S) as rotation:
        a = problem.A
        rotation.step()
        rotation.step()
        assert rotation.sets == 1 and rotation.copies == [] and problem.A is a


def test_the_bench_table_says_how_the_inputs_met_l2():
    cold = [{"input_sets": 31}, {"input_sets": 2}, {"stage": "v0"}]
    assert "up to 31 sets" in _inputs_note(cold)
    assert "one set" in _inputs_note([{"input_sets": 1}])
    assert _inputs_note([{"stage": "h6"}]) is None  # a record from before nsprof said
