"""The autotune-trials rule on launch sequences a real program does not happen to contain: a loop
that alternates configurations, a sweep over sizes, and too few configurations to be a tuning.
(The rule on a real autotuned program: tests/test_real_programs.py.)"""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from nsprof.analyze.autotune_trials import autotune_trials


def capture(*launches: tuple[str, int]):
    """Launches one after another: (kernel name, grid x), each 10 us, block 128."""
    rows = [{"kernel": name, "start_ns": 1000 * i, "grid_x": grid, "grid_y": 1, "grid_z": 1, "block_x": 128,
             "block_y": 1, "block_z": 1} for i, (name, grid) in enumerate(launches)]
    return SimpleNamespace(kernels=pd.DataFrame(rows))


def tuned(*grids: int, repeat: int = 3) -> list[tuple[str, int]]:
    return [("k", grid) for grid in grids for _ in range(repeat)]


def test_a_tuning_that_returns_drops_the_others():
    found = autotune_trials(capture(*tuned(1, 2, 4, 2), ("other", 1)), set())
    assert found == {("k", "(1, 1, 1)", "(128, 1, 1)"), ("k", "(4, 1, 1)", "(128, 1, 1)")}


def test_harness_work_between_trials_does_not_end_the_tuning():
    flushed = [launch for step in tuned(1, 2, 4, 2) for launch in (("fill", 9), step)]
    assert autotune_trials(capture(*flushed), {"fill"}) == {("k", "(1, 1, 1)", "(128, 1, 1)"),
                                                          ("k", "(4, 1, 1)", "(128, 1, 1)")}
    assert autotune_trials(capture(*flushed), set()) == set()  # a fill that is not harness ends every session


def test_once_a_kernel_is_tuned_its_other_tunings_keep_their_last_configuration():
    launches = [*tuned(1, 2, 4, 2), ("other", 1), *tuned(8, 16, 32), ("other", 1), *tuned(32)]
    found = {grid for _, grid, _ in autotune_trials(capture(*launches), set())}
    assert found == {"(1, 1, 1)", "(4, 1, 1)", "(8, 1, 1)", "(16, 1, 1)"}


def test_a_loop_that_alternates_configurations_is_not_a_tuning():
    assert autotune_trials(capture(*tuned(1, 2, 1, 2, 1, 2, 4, 1)), set()) == set()


def test_a_size_sweep_that_never_returns_is_not_a_tuning():
    assert autotune_trials(capture(*tuned(1, 2, 4, 8, 16)), set()) == set()


def test_two_configurations_are_too_few_to_call_a_tuning():
    assert autotune_trials(capture(*tuned(1, 2, 1)), set()) == set()


def test_a_configuration_also_used_outside_a_tuning_is_kept():
    launches = [("k", 1), ("other", 1), *tuned(1, 2, 4, 2)]
    assert autotune_trials(capture(*launches), set()) == {("k", "(4, 1, 1)", "(128, 1, 1)")}
