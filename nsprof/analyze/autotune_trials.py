"""An autotuner's trials: the launch configurations of one kernel that were tried and dropped.

Triton's `@triton.autotune` launches one kernel name with each of its configurations in turn (each
timed by do_bench, so in one unbroken run of launches with only the L2 flush between them), then
keeps one: the program's own launches use the kept configuration, and in the capture all of them
read `matmul_kernel`. Ranked as they are, the dropped configurations fill the hot ranking (ten of
a Triton benchmark's eleven hot rows were trials).

A kernel's *session* is a stretch of its launches with no launch of another kernel between them
(harness work such as the L2 flush aside: it runs between every trial). A session whose
configurations (grid and block) each come in one unbroken run and then return to one of them is an
autotuner choosing: the configuration it returns to is kept, the others are trials. Once a kernel
has shown that, each of its other sessions that goes through AUTOTUNE_MIN_CONFIGS or more
configurations, each once, is its autotuning of another problem (another key), whose last
configuration is kept (the kept one was tried last, so its trial and its use are one run). A
configuration is harness work only where every one of its launches was a trial. A loop that
alternates configurations (X Y X Y) never matches: its configurations come back more than once.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nsprof.analyze.launch_configs import LAUNCH_SIZES, Configuration, combined_codes, configurations
from nsprof.parse.model import GpuTimeline

AUTOTUNE_MIN_CONFIGS = 3  # configurations tried before one is kept

def autotune_trials(export: GpuTimeline, harness_names: set[str]) -> set[Configuration]:
    """The (kernel, grid, block) configurations of the export whose every launch was an autotuner's
    trial (module docstring); `harness_names` are kernels already found to be harness work."""
    kernels = export.kernels
    # the other kernels' launches in time order, as arrays of codes (no copy of the table: it may hold 10M launches)
    kept = np.flatnonzero(~kernels["kernel"].isin(list(harness_names)).to_numpy())
    if not len(kept):
        return set()
    rows = kept[np.argsort(kernels["start_ns"].to_numpy()[kept], kind="stable")]
    name = pd.factorize(kernels["kernel"])[0][rows]
    config = combined_codes(kernels[column].to_numpy() for column in LAUNCH_SIZES)[rows]
    new_session = np.r_[True, name[1:] != name[:-1]]
    new_run = new_session | np.r_[True, config[1:] != config[:-1]]
    runs = pd.DataFrame({"name": name[new_run], "config": config[new_run], "session": np.cumsum(new_session)[new_run],
                         "trial": False})
    several = runs[runs.groupby("session")["config"].transform("size").to_numpy() >= 2]
    sessions = [(int(group["name"].iat[0]), group["config"].tolist(), group.index)
                for _, group in several.groupby("session", sort=False)]
    tuned = {kernel for kernel, order, _ in sessions if _returns(order)}
    for kernel, order, index in sessions:
        if kernel in tuned:
            dropped = set(_dropped(order))
            runs.loc[index, "trial"] = [config in dropped for config in order]
    trial_only = runs.groupby(["name", "config"])["trial"].all()
    trials = trial_only[trial_only].index
    if trials.empty:
        return set()
    width = int(config.max()) + 1  # one key per (name, configuration)
    keys = trials.get_level_values("name").to_numpy(np.int64) * width + trials.get_level_values("config").to_numpy(np.int64)
    return configurations(kernels.iloc[rows[np.isin(name.astype(np.int64) * width + config, keys)]])


def _returns(order: list[int]) -> bool:
    """Configurations each in one run, then a return to one of them."""
    tried, last = order[:-1], order[-1]
    return len(set(tried)) == len(tried) >= AUTOTUNE_MIN_CONFIGS and last in tried[:-1]


def _dropped(order: list[int]) -> list[int]:
    """The configurations a session tried and did not keep (none where it is not an autotuning)."""
    if _returns(order):
        return [config for config in order[:-1] if config != order[-1]]
    if len(set(order)) == len(order) >= AUTOTUNE_MIN_CONFIGS:
        return order[:-1]
    return []
