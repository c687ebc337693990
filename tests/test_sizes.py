import pytest

from nsprof.errors import UsageError
from nsprof.sizes import parse_sizes, size_label


@pytest.mark.parametrize(
    "values, expected",
    [
        (None, [(4096, 4096, 4096)]),
        (["1024"], [(1024, 1024, 1024)]),
        (["1024,4096"], [(1024, 1024, 1024), (4096, 4096, 4096)]),
        (["1024", "4096"], [(1024, 1024, 1024), (4096, 4096, 4096)]),
        (["1000x1200x800, 1x1x1"], [(1000, 1200, 800), (1, 1, 1)]),
        (["1024,1024"], [(1024, 1024, 1024)]),
    ],
)
def test_parse_sizes(values, expected):
    assert parse_sizes(values) == expected


@pytest.mark.parametrize("bad", ["0", "10x2", "abc", "1x2x3x4", "-5", "0x4x4"])
def test_bad_sizes_are_usage_errors(bad):
    with pytest.raises(UsageError, match="bad size"):
        parse_sizes([bad])


def test_size_label():
    assert size_label((1000, 1200, 800)) == "1000x1200x800"
