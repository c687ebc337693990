"""`nsprof explain TOPIC`: a topic explained with the ladder's own access patterns and measurements."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from nsprof import api
from nsprof.commands.options import CEILINGS_HELP
from nsprof.console import stdout
from nsprof.errors import UsageError
from nsprof.explain.topics import TOPICS


def explain(
    topic: str | None = typer.Argument(None, help=f"One of: {', '.join(TOPICS)}."),
    list_: bool = typer.Option(False, "--list", help="List the topics, one line each."),
    stage: str | None = typer.Option(None, "--stage", "-s", help="A ladder stage (v5): its declared accesses "
                                                                 "through the model, and its measurements."),
    op: str | None = typer.Option(None, "--op", help="The ladder whose stages and measurements it uses. "
                                                     "Default: the topic's own (sgemm; hgemm for tensor-cores)."),
    shape: str | None = typer.Option(None, "--shape", help="Your array: ROWSxCOLS elements, padding included (32x33). "
                                                           "Default: 32x32 (bank-conflicts), 1024x1024 (coalescing)."),
    access: str | None = typer.Option(
        None, "--access",
        help="How lane l indexes it: row (element l in row-major order), column (row l, column 0), broadcast (all "
             "lanes on row 0, column 0), or 'ROW,COL' expressions of lane such as 'lane/2,(lane%2)*4'. Default: row."),
    width: int | None = typer.Option(None, "--width", min=1, help="Bytes per element, which is what each "
                                                                  "lane moves: 4, 8 or 16. Default: 4."),
    store: bool = typer.Option(False, "--store", help="Model your access as a store (stores never pair lanes up)."),
    source: Path | None = typer.Option(
        None, "--from", metavar="PATH",
        help="Measurements: a profile directory, a directory of profiles (its latest), or an ncu .ncu-rep or "
             ".csv. Default: the latest profile under ./profiles with ncu output, else the committed H200 example."),
    ceilings: Path | None = typer.Option(None, "--ceilings", metavar="PATH", help=CEILINGS_HELP),
    json_: bool = typer.Option(False, "--json", help="Print one JSON document instead of formatted text."),
    markdown: bool = typer.Option(False, "--markdown", help="Print Markdown instead of formatted text."),
) -> None:
    """Explain an optimization topic with this ladder's access patterns and measurements.

    Numbers are computed from the stages' declared accesses (shared-memory banks, global-memory
    sectors) and read from a profile.

    With --shape/--access the same models answer for an access you describe:
    nsprof explain bank-conflicts --shape 32x33 --access column
    """
    from nsprof.render.document_writers import json_ready, to_markdown, to_terminal

    if json_ and markdown:
        raise UsageError("--json and --markdown exclude each other", "choose one output format")
    explanation = api.explain(topic, stage, source, op=op, ceilings=ceilings, shape=shape, access=access, width=width,
                              store=store, list_topics=list_)
    if json_:
        typer.echo(json.dumps(json_ready(explanation.document), indent=2))
    elif markdown:
        typer.echo(to_markdown(explanation.page()), nl=False)
    else:
        to_terminal(explanation.page(), stdout())
