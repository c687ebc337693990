"""One warp's memory access, declared the way a kernel writes it: which array, which element each
lane touches, how many bytes per lane, load or store.

The registry declares each stage's accesses with these (`Stage.accesses`); `nsprof explain` also
builds them from what a user describes (`--shape 32x33 --access column`). The bank and sector
models (nsprof.explain) take them as input. Lane indices are small integer expressions of `lane`
(0..31), `warp` and `tid` (= 32 * warp + lane), written like the CUDA source; nsprof evaluates
them for warp 0 of a block.
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass

from typing_extensions import TypedDict  # pydantic reads it for docs/json (typing's, only from Python 3.12)

from nsprof.errors import UsageError

WARP_SIZE = 32
SPACES = ("shared", "global")
OPS = ("load", "store")
WIDTHS = (4, 8, 16)  # bytes a lane moves: 32-, 64- and 128-bit accesses


class MemoryAccessJson(TypedDict):
    """A MemoryAccess as `nsprof explain --json` writes it (its fields, in their order)."""

    source: str
    space: str
    op: str
    array: str
    shape: tuple[int, int]
    row: str
    col: str
    width: int
    element_bytes: int
    count: int
    once: bool
    note: str


@dataclass(frozen=True)
class MemoryAccess:
    """A warp-wide load or store as the SASS performs it.

    `shape` is (rows, row length) in elements with any padding included; lane `l` accesses
    `width` bytes starting at element [row(l)][col(l)]. `count` is how many instructions of this
    access a warp executes per K tile, or in all when `once` (outside the K loop, like the store
    of C): the access's weight among the kernel's instructions.
    """

    source: str  # the access as the kernel source writes it
    space: str  # "shared" or "global"
    op: str  # "load" or "store"
    array: str
    shape: tuple[int, int]
    row: str  # element row of lane's access, an expression of lane, warp, tid
    col: str
    width: int = 4
    element_bytes: int = 4
    count: int = 1
    once: bool = False
    note: str = ""  # what the SASS does differently from the source, and how we know

    def __post_init__(self):
        if self.space not in SPACES or self.op not in OPS or self.width not in WIDTHS:
            raise ValueError(f"bad access declaration: {self}")

    @property
    def row_bytes(self) -> int:
        return self.shape[1] * self.element_bytes

    def to_json(self) -> MemoryAccessJson:
        return {"source": self.source, "space": self.space, "op": self.op, "array": self.array, "shape": self.shape,
                "row": self.row, "col": self.col, "width": self.width, "element_bytes": self.element_bytes,
                "count": self.count, "once": self.once, "note": self.note}


def lane_elements(access: MemoryAccess) -> list[tuple[int, int]]:
    """The [row, col] element each lane of warp 0 starts its access at."""
    row, col = _compile(access.row), _compile(access.col)
    return [(_evaluate(row, names), _evaluate(col, names))
            for names in ({"lane": lane, "warp": 0, "tid": lane} for lane in range(WARP_SIZE))]


def lane_byte_ranges(access: MemoryAccess) -> list[tuple[int, int]]:
    """[start, end) byte offsets from the array's start, one per lane of warp 0; checks bounds and
    alignment (a misaligned vector access faults on the GPU)."""
    rows, cols = access.shape
    ranges = []
    for lane, (r, c) in enumerate(lane_elements(access)):
        start = (r * cols + c) * access.element_bytes
        if not (0 <= r < rows and 0 <= c < cols) or start + access.width > rows * cols * access.element_bytes:
            raise UsageError(f"lane {lane} accesses [{r}][{c}], outside the {rows}x{cols} array",
                             "give a larger --shape or another --access")
        if start % access.width:
            raise UsageError(f"lane {lane} starts a {access.width}-byte access at byte {start}, not a multiple of {access.width}",
                             "vector accesses must be aligned to their width: choose a row length or "
                             "columns that keep them aligned")
        ranges.append((start, start + access.width))
    return ranges


def parse_shape(text: str) -> tuple[int, int]:
    """'32x33' -> (32, 33): rows by row length, in elements."""
    match = re.fullmatch(r"\s*(\d+)\s*x\s*(\d+)\s*", text.lower())
    if not match or min(int(match[1]), int(match[2])) < 1:
        raise UsageError(f"bad shape '{text}'", "give ROWSxCOLS in elements, padding included, e.g. 32x32 or 32x33")
    return int(match[1]), int(match[2])


def user_access(space: str, shape: tuple[int, int], pattern: str, width: int = 4, op: str = "load") -> MemoryAccess:
    """The access a user describes: an array of `width`-byte elements, read or written by 32 lanes
    along a row (lane l takes element l in row-major order), down a column (lane l takes row l),
    all at one element (broadcast), or at 'ROW,COL' expressions of lane."""
    if width not in WIDTHS:
        raise UsageError(f"bad width {width}", f"choose one of {', '.join(map(str, WIDTHS))} bytes")
    if op not in OPS:
        raise UsageError(f"bad op '{op}'", f"choose one of {', '.join(OPS)}")
    rows, cols = shape
    name = pattern.strip().lower()
    if name == "row":
        row, col = f"lane / {cols}", f"lane % {cols}"
    elif name == "column":
        row, col = "lane", "0"
    elif name == "broadcast":
        row, col = "0", "0"
    elif pattern.count(",") == 1:
        row, col = (part.strip() for part in pattern.split(","))
    else:
        raise UsageError(f"unknown access '{pattern}'", _ACCESS_CHOICES)
    for expression in (row, col):
        _compile(expression)
    access = MemoryAccess(f"{pattern.strip()} of a {rows}x{cols} array of {width}-byte elements", space, op,
                          "array", shape, row, col, width=width, element_bytes=width)
    lane_byte_ranges(access)  # bounds and alignment, as a usage error now
    return access


_ACCESS_CHOICES = ("choose row, column, broadcast, or 'ROW,COL' expressions of lane "
                   "(integers, + - * / % ^ & << >>), e.g. 'lane/2,(lane%2)*4'")
_OPERATORS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.floordiv, ast.FloorDiv: operator.floordiv,  # integer division, as in C
    ast.Mod: operator.mod, ast.BitXor: operator.xor, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
}
_NAMES = ("lane", "warp", "tid")


def _compile(expression: str) -> ast.expr:
    """Parse an index expression, allowing only integers, lane/warp/tid and integer operators."""
    try:
        tree = ast.parse(expression.strip(), mode="eval").body
    except SyntaxError:
        raise UsageError(f"bad index expression '{expression}'", _ACCESS_CHOICES) from None
    for node in ast.walk(tree):
        allowed = (isinstance(node, (ast.BinOp, ast.UnaryOp, ast.operator, ast.USub, ast.Load))
                   or (isinstance(node, ast.Constant) and type(node.value) is int)
                   or (isinstance(node, ast.Name) and node.id in _NAMES))
        if not allowed or (isinstance(node, ast.BinOp) and type(node.op) not in _OPERATORS):
            raise UsageError(f"bad index expression '{expression}'", _ACCESS_CHOICES)
    return tree


def _evaluate(node: ast.expr, names: dict[str, int]) -> int:
    # _compile admits only integer constants, the names, negation and binary operators
    if isinstance(node, ast.Constant):
        assert type(node.value) is int
        return node.value
    if isinstance(node, ast.Name):
        return names[node.id]
    if isinstance(node, ast.UnaryOp):
        return -_evaluate(node.operand, names)
    assert isinstance(node, ast.BinOp)
    left, right = _evaluate(node.left, names), _evaluate(node.right, names)
    if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and right == 0:
        raise UsageError("an index expression divides by zero", _ACCESS_CHOICES)
    if isinstance(node.op, (ast.LShift, ast.RShift)) and not 0 <= right < 64:
        raise UsageError(f"an index expression shifts by {right}", "shift by 0 to 63 bits")
    return _OPERATORS[type(node.op)](left, right)
