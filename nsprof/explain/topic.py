"""What a topic of `nsprof explain` is: its text and what the explanation computes and shows beside
it (the topics themselves are nsprof.explain.topics)."""

from __future__ import annotations

from dataclasses import dataclass, field

from nsprof.errors import UsageError


@dataclass(frozen=True)
class Topic:
    name: str
    summary: str  # one line, for --list
    text: str  # Markdown
    # its model: "shared" (banks), "global" (sectors), "waves" (the launch plan), "inputs" (the L2) or none
    space: str | None = None
    op: str = "sgemm"  # the ladder whose stages and measurements it uses
    stages: tuple[str, ...] = ()  # ladder stages it is about, in ladder order
    steps: tuple[tuple[str, str], ...] = ()  # (before, after): stage changes it explains
    # the same for other ladders the topic applies to (`explain --op`): op -> (stages, steps)
    other_ladders: dict[str, tuple[tuple[str, ...], tuple[tuple[str, str], ...]]] = field(default_factory=dict)

    def ladder(self, op: str) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
        """The stages and steps of `op`'s ladder that the topic is about."""
        if op == self.op:
            return self.stages, self.steps
        if op not in self.other_ladders:
            ops = ", ".join([self.op, *self.other_ladders])
            raise UsageError(f"topic '{self.name}' is not about the {op} ladder", f"give --op {ops.replace(', ', ' or --op ')}")
        return self.other_ladders[op]
    quantities: tuple[str, ...] = ()  # measured per stage
    examples: tuple[tuple[str, str, int], ...] = ()  # (shape, access, width) worked by the model
    caveats: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
