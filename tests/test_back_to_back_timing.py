"""Back-to-back timing's policy (nsprof.launch.back_to_back), without a GPU: the chain of launches is replaced by
a model of a host that takes `host_s` to queue a launch and a GPU that takes `gpu_s` to run one; a chain whose
hold the host did not outrun reads the host's time. Chains of the stage and the library go in turn, and a chain
the GPU reached first is timed again behind a longer hold."""

import pytest

from nsprof.launch import HOLD_VARIABLE, back_to_back


@pytest.fixture
def simulated_chains(monkeypatch):
    speeds = {"ours": 6e-6, "theirs": 7e-6, "host_s": 30e-6}
    chains: list[tuple[str, int, float]] = []

    def chain(launch, count, hold_s):
        name = launch()
        chains.append((name, count, hold_s))
        gpu_s, host_s = speeds[name], speeds["host_s"]
        ahead = hold_s > count * host_s
        per_launch = gpu_s if ahead or host_s <= gpu_s else host_s
        return 1e3 * count * per_launch, count * host_s, ahead

    monkeypatch.setattr(back_to_back, "time_chain", chain)
    monkeypatch.setattr(back_to_back, "warm_up", lambda both: [1e3 * (speeds["ours"] + speeds["theirs"])] * 3)
    return speeds, chains


def test_a_chain_lasts_about_chain_s_within_its_bounds():
    assert back_to_back.chain_length(6e-3) == 334  # a 6 us kernel: 2 ms of them
    assert back_to_back.chain_length(5.0) == back_to_back.MIN_CHAIN
    assert back_to_back.chain_length(1e-4) == back_to_back.MAX_CHAIN


def test_the_two_chains_go_in_turn_and_a_launch_reads_the_gpu_s_time(simulated_chains, monkeypatch):
    monkeypatch.delenv(HOLD_VARIABLE, raising=False)
    speeds, chains = simulated_chains
    ours, theirs = back_to_back.chained_medians(lambda: "ours", lambda: "theirs", rounds=5)
    assert (ours, theirs) == pytest.approx((6e-3, 7e-3))
    # the first chain, behind the first hold, reads the host's time and goes again behind a longer one
    assert [name for name, _, _ in chains] == ["ours", "ours", "theirs"] + ["ours", "theirs"] * 4
    assert chains[1][2] > chains[1][1] * speeds["host_s"] > chains[0][2]
    assert all(count == back_to_back.chain_length(6.5e-3) for _, count, _ in chains)
    assert chains[-1][2] == pytest.approx(back_to_back.HOLD_MARGIN * chains[-1][1] * speeds["host_s"])


def test_unheld_timing_never_holds(simulated_chains, monkeypatch):
    monkeypatch.setenv(HOLD_VARIABLE, "0")
    _, chains = simulated_chains
    ours, theirs = back_to_back.chained_medians(lambda: "ours", lambda: "theirs", rounds=3)
    assert [hold for _, _, hold in chains] == [0.0] * 6
    assert ours == theirs == pytest.approx(30e-3)  # the host's time: what an unheld chain of short kernels reads
