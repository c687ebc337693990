"""A Triton stage's launch configuration: the values of its kernel's block-size constexprs, warps
and pipeline stages (what `@triton.autotune`'s `triton.Config` holds), declared with the stage so
that `nsprof stages` lists them without importing Triton."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TritonConfig:
    entry: str  # the @triton.jit function: the kernel's name in a profile
    blocks: tuple[tuple[str, int], ...]  # constexpr name -> value, in the order the shape writes them
    num_warps: int = 4
    num_stages: int = 3
    arch: str | None = None  # Triton compiles for the device it runs on
    variant: str = ""  # what sets this kernel apart from the file's others ("tma"), as the shape ends

    @property
    def shape(self) -> str:
        """'128x128x32 w8 s3': the BLOCK_ sizes, warps and stages, as --tile picks one."""
        sizes = "x".join(str(value) for name, value in self.blocks if name.startswith("BLOCK_"))
        return f"{sizes} w{self.num_warps} s{self.num_stages}" + (f" {self.variant}" if self.variant else "")

    @property
    def entries(self) -> tuple[str, ...]:
        return (self.entry,)

    @property
    def meta(self) -> dict[str, int]:
        """The constexprs as the kernel takes them (keyword arguments)."""
        return dict(self.blocks)
