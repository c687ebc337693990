"""Text cut to a width without cutting a word: names and messages in tables and sentences."""

from __future__ import annotations

ELLIPSIS = "…"
SEPARATORS = frozenset("/:_,;. -<>()[]{}@|")  # where a name or a sentence may be cut (bar labels too)


def shortened(text: str, width: int) -> str:
    """`text`, or its start up to a separator and an ellipsis, in `width` characters at most:
    `cudnn_generated_fort_native_sdpa_…`, never `…_sdpa_sm90_f…`. A start with no separator in its
    second half is cut where the width ends (a single long word)."""
    if len(text) <= width:
        return text
    room = max(width - 1, 1)
    cut = max((at for at in range(room // 2, room + 1) if text[at - 1] in SEPARATORS or text[at:at + 1] == " "),
              default=room)
    return text[:cut].rstrip() + ELLIPSIS
