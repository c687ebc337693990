"""The NVTX ranges nsprof puts around its launches, in one place: the stage runner writes them,
the capture filters on them, and both parsers read them back.

Each measured launch sits in a push/pop range of domain `nsprof` named `<op>/<stage>/<MxNxK>`
(`sgemm/v6/4096x4096x4096`, `hgemm/h5/...`); the verification launch in `verify/<op>/<stage>/<MxNxK>`. Parsed
names are qualified as `domain:name` (`nsprof:sgemm/v6/4096x4096x4096`), bare for the default domain.
"""

from __future__ import annotations

import re

from nsprof.sizes import Size, size_label

NVTX_DOMAIN = "nsprof"
_STAGE_RANGE = re.compile(rf"^{NVTX_DOMAIN}:(?P<op>[^/:]+)/(?P<stage>[^/]+)/(?P<size>\d+(?:x\d+)*)$")


def range_name(op: str, stage: str, size: Size) -> str:
    """The range around each measured launch: sgemm/v6/4096x4096x4096."""
    return f"{op}/{stage}/{size_label(size)}"


def verify_range_name(op: str, stage: str, size: Size) -> str:
    """Verification launches get a range of their own so that filters on measured ranges skip them."""
    return f"verify/{range_name(op, stage, size)}"


def step_range_name(op: str, stage: str, size: Size, step: str) -> str:
    """A stage's step (v8's transpose of A) or prepare work timed alone, beside the stage: in a range of its
    own, so that a capture shows those launches as the harness's timing, not the stage's."""
    return f"step/{range_name(op, stage, size)}/{re.sub(r'[^A-Za-z0-9]+', '-', step)}"


def tune_range_name(op: str, stage: str, size: Size, config: str) -> str:
    """A Triton stage's autotuning trial of one configuration, timed before the stage: in a range of
    its own, so that a capture shows those launches as the harness's."""
    return f"tune/{range_name(op, stage, size)}/{re.sub(r'[^A-Za-z0-9]+', '-', config)}"


def qualify(domain: str | None, name: str) -> str:
    """'domain:name' as both parsers write a range; the bare name for the default domain."""
    return name if domain is None else f"{domain}:{name}"


def parse_stage_range(qualified: str) -> dict | None:
    """'nsprof:sgemm/v6/4096x4096x4096' -> {'op': 'sgemm', 'stage': 'v6', 'size': '4096x4096x4096'}."""
    match = _STAGE_RANGE.match(qualified)
    return match.groupdict() if match else None


PIPELINE_PREFIX = "pipeline"


def pipeline_range(op: str, stage: str, variant: str, size: Size) -> str:
    """The range around each timed flow of `nsprof pipeline`: pipeline/<op>/<stage>/<variant>/<MxNxK>."""
    return f"{PIPELINE_PREFIX}/{op}/{stage}/{variant}/{size_label(size)}"

