"""nsprof.printable: how names with control characters are shown (end to end in test_damaged_inputs_2.py)."""

import json

import pytest

from nsprof.printable import printable, printable_json


@pytest.mark.parametrize(("text", "shown"), [
    ("sgemm_v1", "sgemm_v1"),
    ("void f<float>(const float *, int)", "void f<float>(const float *, int)"),  # nothing to spell
    ("é ü 行列 ✓", "é ü 行列 ✓"),  # printable Unicode stays
    ("red\x1b[31mtext\x1b[0m", "red\\x1b[31mtext\\x1b[0m"),
    ("a\nb\tc\rd", "a\\nb\\tc\\rd"),
    ("nul\x00del\x7fc1\x9b", "nul\\x00del\\x7fc1\\x9b"),
    ("abc\u202edef\u2066", "abc\\u202edef\\u2066"),  # bidirectional overrides would reorder the line
])
def test_control_characters_are_spelled_and_the_rest_kept(text, shown):
    assert printable(text) == shown
    assert printable(shown) == shown  # spelling twice changes nothing


def test_json_strings_load_spelled_keys_and_values_alike():
    document = {"k\x1bey": ["x\ny", "\\n is a backslash and an n", "\u202e", "ok é"], "n": 1.5}
    loaded = json.loads(printable_json(json.dumps(document)))
    assert loaded == {"k\\x1bey": ["x\\ny", "\\n is a backslash and an n", "\\u202e", "ok é"], "n": 1.5}


def test_json_without_control_characters_is_unchanged():
    text = json.dumps({"name": "sgemm_v1", "path": "C:\\\\dir\\\\new", "unicode": "\u00e9"})
    assert printable_json(text) == text
