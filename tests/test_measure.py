"""Timing policy (no GPU: the CUDA-event timer is replaced by one that reports fixed times)."""

import pytest

from nsprof.launch import measure


@pytest.fixture
def fake_events(monkeypatch):
    """Every launch 'takes' `ms[0]` milliseconds of GPU time; the calls are recorded."""
    calls, ms = [], [1.0]

    def event_times(launch, count, range_name):
        calls.append((count, range_name))
        return [ms[0]] * count

    monkeypatch.setattr(measure, "_event_times", event_times)
    return calls, ms


def test_warm_up_lasts_at_least_its_time_before_timing(fake_events):
    calls, ms = fake_events
    timing = measure.time_launches(lambda: None, range_name="r")
    warm = [count for count, name in calls if name is None]
    assert sum(warm) * ms[0] >= measure.WARMUP_S * 1e3 and timing.warmup == sum(warm)
    assert calls[-1] == (int(measure.TARGET_S / 1e-3), "r")  # 1 ms launches: 250 timed, inside the range


def test_warm_up_of_tiny_kernels_is_capped_and_slow_ones_get_three(fake_events):
    calls, ms = fake_events
    ms[0] = 1e-4  # 0.1 us: 0.1 s would take a million launches
    assert measure.time_launches(lambda: None).warmup == measure.MAX_WARMUP
    calls.clear()
    ms[0] = 500.0
    assert measure.time_launches(lambda: None).warmup == 3


def test_an_explicit_warmup_count_is_kept(fake_events):
    calls, _ = fake_events
    assert measure.time_launches(lambda: None, repeat=5, warmup=0).warmup == 0
    assert calls == [(5, None)]
