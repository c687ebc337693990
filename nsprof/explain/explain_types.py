"""The documents `nsprof explain --json` prints, as types: the topic list, a ladder topic's page, a page of
what a capture measured (pipeline, gpu-idle), gpu-vs-cpu's, and an access the user describes. Plain dicts
at run time, so the JSON is what these say; mypy checks every key, and docs/json/explain.schema.json is the
JSON Schema derived from ExplainDocument (tests/json_schemas.py). A table's rows whose columns vary
(a topic's measured quantities) stay column -> value."""

from __future__ import annotations

from typing import Any

from typing_extensions import NotRequired, TypedDict  # pydantic reads them for docs/json

from nsprof.access import MemoryAccessJson
from nsprof.analyze.host_types import HostSide
from nsprof.analyze.loop_types import LoopJson, PhaseJson
from nsprof.analyze.pipeline_types import CopyFacts, FastestFlow
from nsprof.explain.cpu_gap_types import CpuGapFacts
from nsprof.ladder.ops.waves import WavesJson

# -- the topic list ---------------------------------------------------------------------------------


class TopicSummary(TypedDict):
    topic: str
    summary: str


class TopicList(TypedDict):
    """`nsprof explain --list --json`."""

    topics: list[TopicSummary]


# -- the models: one warp's access through the bank model and the sector model ----------------------


class BankLane(TypedDict):
    """The 4-byte words one lane touches, their banks and the wavefront (1-based) that serves each."""

    lane: int
    banks: list[int]
    words: list[int]
    wavefronts: list[int]


class BankFigures(TypedDict):
    """What the bank model computes for one access (nsprof.explain.bank_model.BankAnalysis)."""

    n_way: int
    wavefronts: int
    min_wavefronts: int
    excess_wavefronts: int  # what Nsight Compute counts as bank conflicts
    paired: bool  # a load whose lanes pair up on equal addresses: phases doubled
    phases: list[list[int]]  # the lanes served together
    phase_wavefronts: list[int]
    lanes: list[BankLane]


class BankJson(BankFigures):
    access: MemoryAccessJson


class SectorLane(TypedDict):
    lane: int
    start: int  # [start, end) bytes from the array's start
    end: int


class SectorFigures(TypedDict):
    """What the sector model computes for one access (nsprof.explain.coalescing.SectorAnalysis)."""

    sectors: int
    lines: int
    min_sectors: int
    bytes_used: int
    efficiency: float  # bytes used over bytes moved
    sector_ids: list[int]
    line_ids: list[int]
    lanes: list[SectorLane]


class SectorJson(SectorFigures):
    access: MemoryAccessJson


class StageBankJson(BankJson):
    stage: str


class StageSectorJson(SectorJson):
    stage: str


class BankExample(TypedDict):
    """A topic's worked example through the bank model."""

    shape: str
    access: str
    width: int
    wavefronts: int
    min_wavefronts: int
    n_way: int
    excess_wavefronts: int


class MixPredictionRow(TypedDict):
    """A stage's declared shared loads (or stores) predicted for the whole kernel, per instruction."""

    stage: str
    op: str
    mix: str  # per warp per K tile: '16 LDS.128 x 2 wf + ...'
    wavefronts_per_instruction: float
    conflicts_per_instruction: float


class SectorRow(TypedDict):
    source: str
    sass: str
    count: str  # per K tile, or once
    sectors: int
    lines: int
    min_sectors: int
    efficiency: float


class SectorExample(SectorRow):
    shape: str
    access: str
    width: int


class StageSectorRow(SectorRow):
    stage: str


class BankModelJson(TypedDict, total=False):
    """The bank model's records (model_sections.shared_model): one stage's accesses, or the topic's
    worked examples; and the kernel-wide predictions for the stages not measured."""

    accesses: list[StageBankJson]
    examples: list[BankExample]
    predictions: list[MixPredictionRow]


class SectorModelJson(TypedDict, total=False):
    """The sector model's records (model_sections.global_model): one stage's accesses, or the topic's
    worked examples and every global access of its stages."""

    accesses: list[StageSectorJson]
    examples: list[SectorExample]
    predictions: list[StageSectorRow]


class StageWaves(WavesJson):
    stage: str


class WaveSectionJson(TypedDict):
    """wave-quantization's records (waves.wave_section): the SMs counted on, and the counted stages' plans."""

    sm_count: int
    sm_count_source: str
    waves: list[StageWaves]


class InputsRow(TypedDict):
    size: str
    footprint_mib: float
    l2s: float
    one_set: str  # what a launch on one set of buffers finds in the L2
    sets: int
    apart_mib: float


class InputsSectionJson(TypedDict):
    """cold-inputs' records (cold_inputs.inputs_section): the L2, and one product's buffers against it per size."""

    l2_mib: float
    l2_source: str
    inputs: list[InputsRow]


ModelJson = BankModelJson | SectorModelJson | WaveSectionJson | InputsSectionJson  # a topic's model's records

# -- what a ladder's profile measured (evidence_sections.evidence_section) ---------------------------


class SharedPrediction(TypedDict):
    """The declared mix's prediction for a launch (None where the stage declares none, or the launch
    geometry is unknown)."""

    predicted_wavefronts_per_instruction: float | None
    predicted_instructions: int | None
    predicted_wavefronts: int | None
    predicted_conflicts: int | None


class SharedMemoryRow(SharedPrediction):
    """One stage's shared loads or stores per launch: predicted from the declared accesses, measured by ncu."""

    stage: str
    size: str
    op: str
    launches: int
    mix: str
    measured_wavefronts_per_instruction: float | None
    measured_instructions: float | None
    measured_wavefronts: float | None
    measured_conflicts: float | None


class ConflictChange(TypedDict):
    step: str
    op: str
    size: str
    predicted_change: float | None
    measured_change: float | None


class L1BytesRow(TypedDict):
    stage: str
    size: str
    launches: int
    predicted_l1_bytes: int | None
    measured_l1_bytes: float | None


class KernelConflicts(TypedDict):
    """A kernel of a profile without nsprof stage ranges, by its measured bank conflicts per launch."""

    kernel: str
    launches: int
    conflicts: float
    ld_conflicts: float | None
    st_conflicts: float | None
    ld_wavefronts_per_instruction: float | None
    st_wavefronts_per_instruction: float | None


class StepTime(TypedDict):
    """Time per launch before and after one optimization step, at one size: nsys's and ncu's."""

    before: str
    after: str
    size: str
    nsys_before_us: float | None
    nsys_after_us: float | None
    nsys_change_pct: float | None
    ncu_before_us: float | None
    ncu_after_us: float | None
    ncu_change_pct: float | None


class EvidenceSource(TypedDict):
    source: str  # the capture read
    reason: str  # why it was read


class EvidenceParts(TypedDict, total=False):
    """What a profile measured of the topic, each where it applies: bank conflicts by kernel (no stage
    ranges), shared memory predicted against measured, L1 bytes, the topic's quantities per stage."""

    kernels: list[KernelConflicts]
    shared_memory: list[SharedMemoryRow]
    conflict_changes: list[ConflictChange]
    l1_bytes: list[L1BytesRow]
    quantities: list[dict[str, Any]]  # stage, size and the topic's quantities (evidence.QUANTITIES)
    missing_metrics: list[str]  # the ncu metrics to collect for the quantities the profile lacks


class Evidence(EvidenceSource, EvidenceParts):
    gpu: str | None
    steps: list[StepTime]


# -- a ladder topic's page (explanation.ladder_explanation) ------------------------------------------


class LadderStep(TypedDict):
    """An optimization step the topic explains, from the registry."""

    step: str  # 'v3 -> v4'
    changes: str
    why: str
    metric: str


class LadderStage(TypedDict):
    stage: str
    title: str
    changes: str


class _TopicText(TypedDict):
    topic: str
    summary: str
    text: str  # Markdown
    facts: list[str]  # computed for this ladder or measured in the capture (Markdown on measured pages)
    caveats: list[str]
    references: list[str]


class LadderPage(_TopicText):
    """`nsprof explain TOPIC --json` for a topic of the ladders: its stages and steps, its model's records
    (where it has a model: the keys of one of ModelJson), computed facts and what the profile measured."""

    stage: str | None  # --stage
    ladder: list[LadderStep] | list[LadderStage]
    accesses: NotRequired[list[StageBankJson] | list[StageSectorJson]]
    examples: NotRequired[list[BankExample] | list[SectorExample]]
    predictions: NotRequired[list[MixPredictionRow] | list[StageSectorRow]]
    sm_count: NotRequired[int]
    sm_count_source: NotRequired[str]
    waves: NotRequired[list[StageWaves]]
    l2_mib: NotRequired[float]
    l2_source: NotRequired[str]
    inputs: NotRequired[list[InputsRow]]
    evidence: Evidence | None  # None: no profile to read


# -- pages of what a capture measured -----------------------------------------------------------------


class PipelineFacts(CopyFacts):
    """`explain pipeline`'s measurements (pipeline_facts): the capture's copies, and the fastest flow
    where it is an `nsprof pipeline` capture."""

    source: str
    pipeline: FastestFlow | None


class HostFacts(HostSide):
    """The host side with its loop and phases (their JSON) and what analyze says of them."""

    loop: LoopJson | None
    phases: list[PhaseJson]
    said: list[str]


class MeasuredPage(_TopicText):
    """`nsprof explain pipeline --json` and `nsprof explain gpu-idle --json`: the topic's text and the facts
    measured in the capture read."""

    measured: PipelineFacts | HostFacts
    evidence: EvidenceSource


class GpuVsCpuPage(_TopicText):
    """`nsprof explain gpu-vs-cpu --json`."""

    ladder: list[LadderStep] | list[LadderStage]
    measured: CpuGapFacts
    evidence: EvidenceSource


# -- an access the user describes (explanation.explain_access) -----------------------------------------


class DescribedAccess(TypedDict):
    topic: str
    summary: str
    access: str  # as given: row, column, broadcast, or 'ROW,COL' expressions of lane
    shape: list[int]
    width: int
    op: str


class BankAccessPage(DescribedAccess, BankFigures):
    """`nsprof explain bank-conflicts --shape ... --access ... --json`."""

    conflict_free_row_length: int | None  # the padded row length that removes a conflict, if one does
    explanation: list[str]


class SectorAccessPage(DescribedAccess, SectorFigures):
    """`nsprof explain coalescing --shape ... --access ... --json`."""

    explanation: list[str]


AccessPage = BankAccessPage | SectorAccessPage
ExplainDocument = TopicList | LadderPage | MeasuredPage | GpuVsCpuPage | AccessPage  # what --json prints
