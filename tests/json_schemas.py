"""The JSON Schema of each command's --json, derived from the document's type with pydantic and
kept in docs/json/<command>.schema.json. A typed object is closed (a key the type does not declare
is an error); a table's rows (column -> value) stay open. `python tests/json_schemas.py` writes the
files; tests/test_json_schemas.py checks that they are current and that real output matches them."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import TypeAdapter

from nsprof.analyze.captures_types import CapturesDocument
from nsprof.capture.checks import Check
from nsprof.ceilings.types import CpuCeilings, GpuCeilings
from nsprof.diff.types import DiffDocument, NoiseDocument, NoiseRecord
from nsprof.explain.explain_types import ExplainDocument
from nsprof.history.store import HistoryRow
from nsprof.history.trend import CheckDocument
from nsprof.ladder.op_model import StageJson
from nsprof.ladder_runs.bench_types import BenchDocument
from nsprof.render.json_documents import AnalyzeDocument

DOCS = Path(__file__).parents[1] / "docs" / "json"
DOCUMENTS = {  # file stem -> (the document's type, the command that writes it)
    "analyze": (AnalyzeDocument, "nsprof analyze CAPTURE --json"),
    "analyze-captures": (CapturesDocument, "nsprof analyze DIRECTORY-OF-CAPTURES --json"),
    "diff": (DiffDocument, "nsprof diff A B --json"),
    "noise": (NoiseDocument, "nsprof noise RUNS... --out FILE --json"),
    "noise-record": (NoiseRecord, "the record nsprof noise writes (FILE), which nsprof diff --noise reads"),
    "doctor": (list[Check], "nsprof doctor --json"),
    "stages": (list[StageJson], "nsprof stages --json"),
    "history": (list[HistoryRow], "nsprof history show --json"),
    "history-check": (CheckDocument, "nsprof history check --fail-if-slower PCT --json"),
    "ceilings": (GpuCeilings, "nsprof ceilings --json (and the ceilings-<gpu>.json it saves)"),
    "ceilings-cpu": (CpuCeilings, "nsprof ceilings --cpu --json (and the file it saves)"),
    "bench": (BenchDocument, "nsprof bench --json (and the results file it writes)"),
    "explain": (ExplainDocument, "nsprof explain [TOPIC] --json"),
}


def schema(name: str) -> dict:
    """The JSON Schema of the document `name` (DOCUMENTS), closed where typed, without the titles
    pydantic makes up from each key."""
    kind, command = DOCUMENTS[name]
    found = TypeAdapter(kind).json_schema()
    _tidied(found)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": command, **found}


def _tidied(node) -> None:
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            node["additionalProperties"] = False
            node.pop("title", None)
            for prop in node["properties"].values():
                if isinstance(prop, dict):
                    prop.pop("title", None)
        for value in node.values():
            _tidied(value)
    elif isinstance(node, list):
        for value in node:
            _tidied(value)


def text(name: str) -> str:
    return json.dumps(schema(name), indent=2) + "\n"


if __name__ == "__main__":
    for stem in DOCUMENTS:
        (DOCS / f"{stem}.schema.json").write_text(text(stem))
        print(f"wrote docs/json/{stem}.schema.json")
