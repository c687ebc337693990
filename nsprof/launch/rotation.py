"""Cold inputs for timing: launches timed over and over on one set of buffers find them in L2 when they fit
(or what the launch before left there when they nearly do), so a timing measures the cache, not the kernel a
program runs on weights it last touched a layer ago. While `rotating_inputs(problem)` is active, every launch
nsprof.launch.measure queues first points the problem at the next of several sets of its buffers (copies of
its own, at other addresses), so that a launch's were last touched COLD_L2S L2s of traffic earlier, whichever
launch (a library's, a paired stage's) came between. On an H200, one set against rotated ones moved h6's % of
the library by 7-16 points at the decode shapes and 8 at 1024^3; from 4 L2s up the two agreed within their
spread (benchmarks/records/2026-11-30-h200-hgemm-cold-inputs).

Launches read the problem's buffers at each call (the op contract), so pointing its attributes is the whole
rotation; the problem's own set is back in place after every queue of launches, where verification and a
stage's refresh find it. A buffer a launcher makes from the inputs and reads in its launches (SGEMV's transposed
A) follows the sets through `per_input_set`; a padded copy, which the launch writes from the moved inputs, follows
them by itself (and is warm when its kernel reads it).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

COLD_L2S = 3  # a launch's buffers were last touched this many L2s of traffic earlier
ROTATE_BELOW_L2S = 4  # problems this many L2s or larger keep one set: measured level either way
MAX_SETS = 64  # problems too small for this many sets to cover COLD_L2S stay partly warm


class InputRotation:
    """The sets a problem's launches rotate among: the problem's own buffers (`names`: its attributes, read
    again at each queue's first launch, after any refresh) and copies of them, made here (never between the
    timed launches)."""

    def __init__(self, problem, names: tuple[str, ...], l2_bytes: int):
        self.problem, self.names = problem, names
        footprint = sum(getattr(problem, name).nbytes for name in names)
        self.sets = set_count(footprint, l2_bytes)
        self._copies = [tuple(getattr(problem, name).copy() for name in names) for _ in range(self.sets - 1)]
        self._own: tuple | None = None
        self._turn = 0

    @property
    def copies(self) -> list[tuple]:
        """The copies' buffers, a tuple of `names` each."""
        return list(self._copies)

    def step(self) -> None:
        """Point the problem at the next set (its own buffers every `sets` launches)."""
        if self.sets == 1:
            return
        if self._own is None:
            self._own = tuple(getattr(self.problem, name) for name in self.names)
        chosen = self._own if self._turn == 0 else self._copies[self._turn - 1]
        for name, array in zip(self.names, chosen):
            setattr(self.problem, name, array)
        self._turn = (self._turn + 1) % self.sets

    def restore(self) -> None:
        """The problem's own buffers back in place (a queue of launches ends); the next queue goes on with the
        turn where this one left it, so that chunks of a timing shorter than the sets still cover them all."""
        if self._own is not None:
            for name, array in zip(self.names, self._own):
                setattr(self.problem, name, array)
        self._own = None


def set_count(footprint: int, l2_bytes: int) -> int:
    """How many sets of `footprint` bytes keep each launch's COLD_L2S L2s of traffic from its last use
    (1 from ROTATE_BELOW_L2S L2s up; at most MAX_SETS)."""
    if footprint <= 0 or footprint >= ROTATE_BELOW_L2S * l2_bytes:
        return 1
    return min(MAX_SETS, 1 + math.ceil(COLD_L2S * l2_bytes / footprint))


_active: ContextVar[InputRotation | None] = ContextVar("nsprof_input_rotation", default=None)


def active_rotation() -> InputRotation | None:
    """The rotation the launches queued now step through, if any."""
    return _active.get()


@contextlib.contextmanager
def rotating_inputs(problem, l2_bytes: int | None = None) -> Iterator[InputRotation]:
    """Every launch timed inside steps `problem` (its `buffers`) to its next set of buffers; the sets as
    many as this GPU's L2 (or `l2_bytes`) asks."""
    if l2_bytes is None:
        from nsprof.launch.gpu import require_cupy

        cupy = require_cupy()
        l2_bytes = int(cupy.cuda.Device().attributes["L2CacheSize"])
    rotation = InputRotation(problem, problem.buffers, l2_bytes)
    token = _active.set(rotation)
    try:
        yield rotation
    finally:
        _active.reset(token)
        rotation.restore()


def per_input_set(problem, name: str, own: Any, make: Callable[[Any], Any]) -> Callable[[], Any]:
    """A launcher's buffer derived from the problem's input `name` that moves with the sets: `own` (the
    launcher keeps it up to date) on the problem's own set, and on each copy of the active rotation one that
    `make(copy's input)` builds now, outside any timing (none where no rotation is active). Returns what gives
    the one for the set the problem points at now, checked by identity, so a refreshed own input gets `own`."""
    rotation = active_rotation()
    made: dict[int, tuple[Any, Any]] = {}
    if rotation is not None and rotation.problem is problem and name in rotation.names:
        index = rotation.names.index(name)
        made = {id(copy[index]): (copy[index], make(copy[index])) for copy in rotation.copies}

    def current() -> Any:
        source = getattr(problem, name)
        entry = made.get(id(source))
        return entry[1] if entry is not None and entry[0] is source else own

    return current
