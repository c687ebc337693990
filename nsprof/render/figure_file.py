"""A matplotlib figure as the bytes of a file: the one place that sets the pixel size of every
chart nsprof writes (reports, roofline, timeline, diff, history) and frees the figure after."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # matplotlib loads only for the commands that draw
    from matplotlib.figure import Figure

PNG_DPI = 150  # figures are laid out in points; this only sets a PNG's pixel size


def figure_bytes(figure: Figure, file_format: str = "png", png_text: dict[str, str] | None = None) -> bytes:
    """`figure` written as `file_format` ("png", "svg", "pdf": matplotlib's names), then closed
    (pyplot keeps every open figure until then: a report draws dozens). `png_text`: text chunks of
    a PNG (what it shows)."""
    [written] = figure_files(figure, (file_format,), png_text)
    return written


def figure_files(figure: Figure, file_formats: tuple[str, ...], png_text: dict[str, str] | None = None) -> list[bytes]:
    """One drawn figure written in each of `file_formats` (the roofline's PNG and SVG), then closed."""
    import matplotlib.pyplot as plt

    written = []
    for file_format in file_formats:
        buffer = io.BytesIO()
        metadata = png_text if file_format == "png" and png_text else None
        figure.savefig(buffer, format=file_format, dpi=PNG_DPI, metadata=metadata)
        written.append(buffer.getvalue())
    plt.close(figure)
    return written
