"""The manual's ladder tables (docs/ladders/) against the registry: a stage added, renamed or
reordered in nsprof/ladder/ops without the manual following fails here.

The tables also carry measured H200 numbers and short paraphrases of each change, which no
registry holds, so they are checked by stage, title and ragged-size handling rather than generated.
"""

import re

import pytest
from manual import page

from nsprof.ladder.registry import all_ops, stages_for

RAGGED_WORDS = {"bounds-check": "bounds checks", "pad": "device padding", "tma-fill": "TMA zero fill",
                "async-fill": "cp.async zero fill", "library": "library"}


def ladder_tables(text: str) -> dict[str, list[dict[str, str]]]:
    """Each `# The <OP> ladder` page's first table, as rows keyed by the header cells."""
    tables = {}
    for match in re.finditer(r"^# The (\S+) ladder\n(.*?)(?=^# |\Z)", text, re.M | re.S):
        table = []
        for line in match.group(2).splitlines():
            if line.startswith("|"):
                table.append([cell.strip() for cell in line.strip().strip("|").split("|")])
            elif table:  # the first table ends at its first line that is not a row
                break
        header, rows = table[0], table[2:]  # table[1] is the --- row
        tables[match.group(1).lower()] = [dict(zip(header, row)) for row in rows]
    return tables


TABLES = ladder_tables("\n".join(page(f"ladders/{op}.md") for op in all_ops()))


def test_every_op_has_a_ladder_table():
    assert sorted(TABLES) == sorted(all_ops())


@pytest.mark.parametrize("op", sorted(all_ops()))
def test_table_lists_the_registry_stages_in_order(op):
    rows = TABLES[op]
    assert [row["stage"] for row in rows] == [f"{s.stage} {s.title}" for s in stages_for(op)]


def test_ragged_columns_say_what_the_registry_does():
    with_column = [op for op, rows in TABLES.items() if "ragged sizes" in rows[0]]
    assert "sgemm" in with_column
    for op in with_column:
        assert [row["ragged sizes"] for row in TABLES[op]] == [RAGGED_WORDS[s.ragged] for s in stages_for(op)]


def test_parser_reads_a_table_and_stops_at_its_end():
    text = "# The FOO ladder\n\nintro\n\n| stage | x |\n| --- | --- |\n| f1 a | 1 |\n\n| other | table |\n# Next\n"
    assert ladder_tables(text) == {"foo": [{"stage": "f1 a", "x": "1"}]}
