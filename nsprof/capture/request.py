"""What one `nsprof profile` run captures: op, stages, sizes, tools and ncu settings, checked once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from nsprof.capture.metrics import resolve_metrics
from nsprof.errors import UsageError
from nsprof.sizes import Size, parse_sizes, size_label

if TYPE_CHECKING:  # the registry loads the ops (and NumPy): not needed to print `nsprof profile --help`
    from nsprof.ladder.registry import Stage

TOOL_CHOICES = {"nsys": ("nsys",), "ncu": ("ncu",), "both": ("nsys", "ncu")}
CLOCK_CONTROLS = ("none", "base")
# ncu replays every profiled launch several times, so it gets few; nsys timelines want more.
DEFAULT_REPEAT = {"nsys": 10, "ncu": 3}
WARMUP = 3  # untimed launches before the measured ones, outside any NVTX range (so ncu skips them)


@dataclass(frozen=True)
class ProfileRequest:
    op: str
    stages: tuple[Stage, ...]
    sizes: tuple[Size, ...]
    tools: tuple[str, ...]  # in the order they run: nsys first
    metrics: tuple[str, ...]  # ncu only
    clock_control: str  # ncu only
    repeat: dict[str, int]  # measured launches per stage and size, per tool
    warmup: int = WARMUP
    runs: int = 1  # nsys runs, each in a fresh process (nsprof.capture.commands.further_runs)
    # CPU stages chosen with them: timed on the host beside the capture, outside the tools (cpu_commands)
    cpu_stages: tuple[Stage, ...] = ()

    @property
    def dtype(self) -> str:
        from nsprof.ladder.registry import get_op

        return get_op(self.op).dtype

    @property
    def all_stages(self) -> bool:
        """Whether every GPU stage of the ladder was chosen (CPU stages are never captured)."""
        from nsprof.ladder.registry import stages_for

        return list(self.stages) == [stage for stage in stages_for(self.op) if not stage.kind.on_host]

    @property
    def size_labels(self) -> list[str]:
        return [size_label(s) for s in self.sizes]


def build_request(op: str = "sgemm", stages: list[str] | None = None, sizes: list[str] | None = None,
                  tool: str = "both", metrics: list[str] | None = None, clock_control: str = "none",
                  repeat: int | None = None) -> ProfileRequest:
    """Validate what the user typed; every mistake is a UsageError (exit code 2)."""
    from nsprof.ladder.registry import get_op, select_stages

    picked = select_stages(op, stages)
    chosen = [stage for stage in picked if not stage.kind.on_host]  # no GPU work for nsys and ncu to capture
    on_cpu = [stage for stage in picked if stage.kind.on_host]
    if not chosen:
        raise UsageError(f"{', '.join(s.stage for s in picked)}: CPU stages run no GPU work, so nsys and ncu have "
                         "nothing to capture", "time them with `nsprof bench`, or choose GPU stages")
    parsed_sizes = parse_sizes(sizes, get_op(op).dims)
    if tool not in TOOL_CHOICES:
        raise UsageError(f"unknown tool '{tool}'", f"choose one of: {', '.join(TOOL_CHOICES)}")
    if clock_control not in CLOCK_CONTROLS:
        raise UsageError(f"unknown clock control '{clock_control}'", f"choose one of: {', '.join(CLOCK_CONTROLS)}")
    tools = TOOL_CHOICES[tool]
    if "ncu" not in tools and (metrics or clock_control != "none"):
        raise UsageError("--metrics and --clock-control apply to ncu only", "drop them or pass --tool ncu or --tool both")
    if repeat is not None and repeat < 1:
        raise UsageError(f"--repeat {repeat}: need at least one measured launch", "pass --repeat 1 or more")
    return ProfileRequest(
        op=op, stages=tuple(chosen), sizes=tuple(parsed_sizes), tools=tools,
        metrics=tuple(resolve_metrics(metrics)) if "ncu" in tools else (),
        clock_control=clock_control,
        repeat={t: repeat or DEFAULT_REPEAT[t] for t in tools},
        cpu_stages=tuple(on_cpu),
    )
