"""What `nsprof explain` prints: an Explanation, a document of nsprof.render.document blocks under
its title and summary, with the JSON document `--json` prints in place of the text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from nsprof.render.document import Block, Heading, Paragraph

if TYPE_CHECKING:  # the types import the models' records; `explain --list` needs none of them
    from nsprof.explain.explain_types import ExplainDocument


@dataclass(frozen=True)
class Explanation:
    title: str
    summary: str
    blocks: list[Block]
    document: ExplainDocument  # what --json prints: the records behind the tables, and more

    def page(self) -> list[Block]:
        """The whole document: the title, the summary in italics, then the blocks."""
        return [Heading(1, self.title), Paragraph(self.summary, emphasis=True), *self.blocks]


def section(heading: str | None, blocks: list[Block]) -> list[Block]:
    """A section's blocks under its heading (none: they follow what came before)."""
    return [Heading(2, heading), *blocks] if heading else list(blocks)


def prose(text: str) -> Paragraph:
    """Text written in Markdown (a topic's, or a sentence that names a file in `code`)."""
    return Paragraph(text, markdown=True)
