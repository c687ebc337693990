"""Timeline labels cut to fit while bars stay told apart, on the names of real captures."""

import re
from pathlib import Path

import pytest

from nsprof.analyze.gpu_events import gpu_events, range_window
from nsprof.analyze.timeline_window import capture_span
from nsprof.kernel_names import kernel_label
from nsprof.parse.nsys_sqlite import load_nsys
from nsprof.render.bar_labels import ELLIPSIS, fitted, shared_parts

ROOT = Path(__file__).resolve().parents[1]
LADDER = ROOT / "tests" / "data" / "h200" / "nsys-sgemm-ladder-1024.sqlite"
TORCH = ROOT / "profiles" / "examples" / "h200-program-torch-train" / "nsys.sqlite"
PIPELINE = ROOT / "profiles" / "examples" / "h200-pipeline-1024" / "nsys.sqlite"


def _names(path: Path) -> list[list[str]]:
    export = load_nsys(path)
    return [sorted(set(export.nvtx["range"].dropna())), sorted({kernel_label(name) for name in gpu_events([export])["name"]})]


def _pieces_in_order(label: str, name: str) -> bool:
    at = 0
    for piece in filter(None, label.split(ELLIPSIS)):
        found = name.find(piece.rstrip(), at)
        if found < 0:
            return False
        at = found + len(piece.rstrip())
    return True


@pytest.mark.parametrize("path", [LADDER, TORCH, PIPELINE], ids=lambda p: p.parent.name if p.name == "nsys.sqlite" else p.stem)
def test_labels_fit_and_are_pieces_of_their_name(path):
    for names in _names(path):
        parts = shared_parts(names)
        for name in names:
            for room in range(1, len(name) + 3):
                label = fitted(name, room, parts[name])
                if label is not None:
                    assert len(label) <= room and _pieces_in_order(label, name), (name, room, label)
                    assert label.strip(ELLIPSIS)  # never an ellipsis alone
            assert fitted(name, len(name), parts[name]) == name


def test_v10_never_reads_v1_at_any_width():
    ranges, kernels = _names(LADDER)
    for names in (ranges, kernels):
        parts = shared_parts(names)
        for name in names:
            version = re.search(r"v(\d+)", name)
            if not version:
                continue
            for room in range(1, len(name) + 1):
                label = fitted(name, room, parts[name])
                shown = label and re.findall(r"v(\d+)(?=\D|$)", label)
                assert not shown or shown == [version.group(1)], (name, room, label)  # v10 whole or not at all


def test_names_sharing_long_parts_keep_what_tells_them_apart():
    ranges, _kernels = _names(LADDER)
    stages = [f"nsprof:sgemm/v{n}/1024x1024x1024" for n in range(1, 11)]
    assert set(stages) <= set(ranges)
    parts = shared_parts(ranges)
    assert [fitted(name, 6, parts[name]) for name in stages] == [f"…v{n}…" for n in range(1, 11)]
    pipeline = sorted(set(load_nsys(PIPELINE).nvtx["range"]))
    parts = shared_parts(pipeline)
    streams = "nsprof:pipeline/sgemm/v10/streams/1024x1024x1024"
    assert fitted(streams, 14, parts[streams]) == "…v10/streams…"
    torch = _names(TORCH)[1]
    elementwise = [name for name in torch if name.startswith("vectorized_elementwise_kernel<")]
    assert len(elementwise) >= 2
    parts = shared_parts(torch)
    shown = [fitted(name, 40, parts[name]) for name in elementwise]
    assert len(set(shown)) == len(shown) and not any("vectorized_elementwise" in label for label in shown)


def test_kernel_label_drops_void_namespaces_and_parameters():
    name = ("void at::native::vectorized_elementwise_kernel<(int)8, "
            "at::native::float16_copy_kernel_cuda(at::TensorIteratorBase &)"
            "::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)")
    # parameter lists inside template arguments go too; a lambda's instance number stays
    assert kernel_label(name) == ("vectorized_elementwise_kernel<(int)8, float16_copy_kernel_cuda"
                                  "::[lambda (instance 1)], array<char *, (unsigned long)2>>")
    assert kernel_label("sgemm_v10_128x128") == "sgemm_v10_128x128"


def test_a_zoomed_stage_labels_its_ranges_and_kernels_with_its_version():
    from nsprof.render.timeline import timeline_figure

    export = load_nsys(LADDER)
    events = gpu_events([export])
    window = range_window([export], events, "sgemm/v10/1024x1024x1024")
    figure = timeline_figure(events, export.nvtx, window, capture_span(events, export.nvtx)[0], "v10")
    texts = [text.get_text() for text in figure.axes[0].texts]
    assert sum(text == "sgemm_v10_128x128" for text in texts) == 5  # its five launches, named whole
    assert [text for text in texts if "nsprof" in text or "v10/" in text] and all(
        "v10" in text for text in texts if text.startswith(("nsprof", ELLIPSIS)))


def test_a_label_that_reads_as_another_kernel_falls_back_to_the_names_start():
    """The SGEMM example's ncu kernels at 20 characters: v8's kernel once read `…128x128_unchecked`,
    which is v10's kernel's ending too; now it keeps its start, `sgemm_v8_128x128_…`."""
    import csv
    from pathlib import Path

    from nsprof.render.table_names import telling_names

    page = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-sgemm-1024" / "ncu-raw.csv"
    rows = list(csv.DictReader(page.open(newline="")))[1:]  # after the units row
    names = list(dict.fromkeys(row["Kernel Name"] for row in rows))
    labels = dict(zip(names, telling_names(names, 20)))
    assert labels["sgemm_v8_128x128_unchecked"] == "sgemm_v8_128x128_…"
    assert labels["sgemm_v10_128x128_unchecked"] == "sgemm_v10_128x128_…"
    assert len(set(labels.values())) == len(names)
