"""nsprof.shorten: text cut between words (names used to be cut inside words)."""

import pytest

from nsprof.shorten import shortened


@pytest.mark.parametrize(("text", "width", "shown"), [
    ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7", 40, "cudnn_generated_fort_native_sdpa_sm90_…"),
    ("unrolled_elementwise_kernel", 24, "unrolled_elementwise_…"),
    ("workload imbalance across SMs", 16, "workload…"),
    ("abcdefghijklmnopqrstuvwxyz", 10, "abcdefghi…"),  # one long word: cut where the width ends
    ("fits", 4, "fits"),
])
def test_text_is_cut_between_words_within_its_width(text, width, shown):
    assert shortened(text, width) == shown and len(shown) <= width
