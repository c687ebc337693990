"""Timing policy (no GPU: the CUDA-event timer is replaced by one that reports fixed times)."""

import time

import pytest

from nsprof.launch import measure


@pytest.fixture
def fake_events(monkeypatch):
    """Every launch 'takes' `ms[0]` milliseconds of GPU time; the calls are recorded."""
    calls, ms = [], [1.0]

    def event_times(launch, count, range_name, held=True):
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


@pytest.fixture
def simulated_gpu(monkeypatch):
    """_queue replaced by a model of a host that takes `host_s` to queue each launch and a GPU that takes
    `gpu_s` to run one: a chunk is clean (each time the GPU's own) when its hold outlasts what the host needs
    beyond what the GPU is busy with; otherwise every launch reads the host's time. The holds are recorded."""
    speeds, holds = {"host_s": 30e-6, "gpu_s": 8e-6}, []

    def queue(launches, range_name, hold_s):
        holds.append((len(launches), hold_s))
        n, host_s, gpu_s = len(launches), speeds["host_s"], speeds["gpu_s"]
        clean = host_s <= gpu_s or hold_s >= n * host_s - (n - 1) * gpu_s
        ahead = hold_s > 0 and n * host_s < hold_s
        return [1e3 * (gpu_s if clean else max(gpu_s, host_s))] * n, n * host_s, ahead

    monkeypatch.setattr(measure, "_queue", queue)
    return speeds, holds


def test_a_slow_host_never_leaks_into_the_times(simulated_gpu):
    speeds, holds = simulated_gpu
    times = measure._timed([lambda: None] * 100, None)
    assert times == [1e3 * speeds["gpu_s"]] * 100  # 8 us each, not the host's 30
    assert all(n <= measure.CHUNK and hold > 0 for n, hold in holds)


def test_a_hold_that_ended_early_is_retried_longer(simulated_gpu):
    speeds, holds = simulated_gpu
    speeds["host_s"] = 200e-6  # 32 launches need 6.4 ms of queuing: the first 2 ms hold is too short
    times = measure._timed([lambda: None] * 40, None)
    assert times == [1e3 * speeds["gpu_s"]] * 40
    assert holds[1][1] > holds[0][1] and len(holds) > 2


def test_once_the_gpu_is_the_slower_the_rest_runs_in_one_go(simulated_gpu):
    speeds, holds = simulated_gpu
    speeds["host_s"], speeds["gpu_s"] = 20e-6, 200e-6
    assert len(measure._timed([lambda: None] * 100, None)) == 100
    assert [n for n, _ in holds] == [measure.CHUNK, 100 - measure.CHUNK]
    assert holds[1][1] < holds[0][1]  # a hold of a few launches, not of a chunk


def test_a_launch_no_hold_helps_is_tried_a_bounded_number_of_times(simulated_gpu):
    speeds, holds = simulated_gpu
    speeds["host_s"] = 10e-3  # a launch that waits for the GPU itself: no hold is ever long enough
    assert len(measure._timed([lambda: None] * 100, None)) == 100
    # the first chunk, tried again twice, held longer up to the cap; then the rest in one run
    assert [n for n, _ in holds] == [measure.CHUNK] * (1 + measure.RETRIES) + [100 - measure.CHUNK]
    assert max(hold for _, hold in holds) == measure.MAX_HOLD_S


def test_launches_in_turn_each_get_their_own_times_from_every_round(monkeypatch):
    """in_turn_medians queues the launches ABC ABC ... (as many rounds as fill TARGET_S after the warm-up says
    how long one takes) and gives each launch the median of its own times; paired_medians is its two-launch case."""
    class Launch:
        def __init__(self, ms: float):
            self.ms = ms

        def __call__(self) -> None:
            pass

    queued: list[list] = []

    def timed(launches, range_name):
        queued.append(list(launches))
        return [launch.ms * (1 + 0.01 * (i % 7)) for i, launch in enumerate(launches)]  # each near its own time

    monkeypatch.setattr(measure, "_timed", timed)
    monkeypatch.setattr(measure, "warm_up", lambda each_in_turn: [6.0] * 3)  # one round of the three: 6 ms
    a, b, c = Launch(1.0), Launch(2.0), Launch(3.0)
    medians = measure.in_turn_medians([a, b, c])
    rounds = int(measure.TARGET_S / 6e-3)
    assert queued[-1] == [a, b, c] * rounds
    assert [round(m) for m in medians] == [1, 2, 3] and medians[0] < medians[1] < medians[2]
    assert measure.paired_medians(b, a, pairs=12)[0] > 1.5 and queued[-1] == [b, a] * 12


@pytest.mark.gpu
def test_the_host_time_of_a_launch_stays_out_of_its_gpu_time():
    """A launch that spends 300 us on the host before queuing a few-microsecond kernel: timed with the host
    held ahead, its median is the kernel's (once the interval of every launch held those 300 us)."""
    import cupy as cp

    x = cp.ones(1024, dtype=cp.float32)

    def slow_host():
        time.sleep(300e-6)
        cp.multiply(x, 2, out=x)

    assert measure.time_launches(slow_host, repeat=64).median_ms < 0.1
    ours, theirs = measure.paired_medians(slow_host, lambda: cp.add(x, 1, out=x), pairs=32)
    assert ours < 0.1 and theirs < 0.1


def test_a_gpu_bench_names_how_its_launches_were_timed_and_a_cpu_bench_does_not(monkeypatch):
    """The results file's `timing` is the method _timed used (held unless NSPROF_HOLD=0), and its `inputs` cold
    unless --warm-inputs, each one of the values its type declares; a bench of CPU stages alone, timed on the
    wall clock, names neither."""
    import typing

    from nsprof.ladder_runs.bench import results_document
    from nsprof.ladder_runs.bench_types import BenchDocument
    from nsprof.launch import HELD, HOLD_VARIABLE, UNHELD

    declared = typing.get_args(typing.get_args(typing.get_type_hints(BenchDocument, include_extras=True)["timing"])[0])
    assert set(declared) == {HELD, UNHELD}
    gpu = {"device": "NVIDIA H200"}
    monkeypatch.delenv(HOLD_VARIABLE, raising=False)
    assert results_document([], gpu)["timing"] == HELD
    monkeypatch.setenv(HOLD_VARIABLE, "0")
    assert results_document([], gpu)["timing"] == UNHELD
    assert "timing" not in results_document([], {"cpu": "x86_64"})
    declared = typing.get_args(typing.get_args(typing.get_type_hints(BenchDocument, include_extras=True)["inputs"])[0])
    assert set(declared) == {"cold", "warm"}
    assert results_document([], gpu)["inputs"] == "cold" and results_document([], gpu, False)["inputs"] == "warm"
    assert "inputs" not in results_document([], {"cpu": "x86_64"})
