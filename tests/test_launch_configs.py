"""combined_codes: one code per launch for its configuration, numbered as a group-by numbers its
groups, on the real JAX capture's launches and on values a group-by handles apart (missing, text)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from nsprof.analyze.launch_configs import LAUNCH_SIZES, combined_codes
from nsprof.parse import load_profile


def test_the_codes_are_a_group_by_s_numbers_on_a_real_capture(real_program):
    kernels = load_profile(real_program("jax-a")).timelines[0].kernels
    expected = kernels.groupby(list(LAUNCH_SIZES), sort=False).ngroup().to_numpy()
    assert len(np.unique(expected)) > 50
    assert (combined_codes(kernels[column].to_numpy() for column in LAUNCH_SIZES) == expected).all()
    names = pd.factorize(kernels["kernel"])[0].astype(np.int64)
    with_names = kernels.assign(code=names).groupby(["code", *LAUNCH_SIZES], sort=False).ngroup().to_numpy()
    assert (combined_codes((kernels[column].to_numpy() for column in LAUNCH_SIZES), key=names.copy()) == with_names).all()


def test_missing_values_and_text_are_values_of_their_own():
    sizes = np.array([1, 1, 2, 2, 1], dtype=np.int32)
    missing = pd.array([None, 5, None, 5, 5], dtype="Int64").to_numpy()
    text = np.array(["x", "y", "x", "x", "y"], dtype=object)
    expected = pd.DataFrame({"a": sizes, "b": missing, "c": text}).groupby(["a", "b", "c"], sort=False, dropna=False)
    assert combined_codes([sizes, missing, text]).tolist() == expected.ngroup().tolist() == [0, 1, 2, 3, 1]
