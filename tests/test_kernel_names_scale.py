"""telling_names on the tens of thousands of NVTX range names a JAX capture has: seconds, not hours,
and still one label a name, none two names', each within its width."""

import random
import sqlite3
import time

import pytest

from nsprof.render.table_names import telling_names

PASSES = ("rematerialization", "algebraic-simplifier", "fusion-dispatch-pipeline", "latency-hiding-scheduler",
          "pre-scheduling-passes", "sanitize-constant-names", "async-to-sync-converter", "topk-splitter",
          "reduce-decomposer", "gather_expander", "dot-strength-reduction", "layout-assignment", "cse",
          "while-loop-simplifier", "rng-expander", "variadic-op-splitter", "remat-pipeline", "fusion-wrapper")
MODULES = ("cudnn-conv", "cudnn-conv-bw-input", "cudnn-conv-bw-filter", "cudnn-conv-bias-activation",
           "wrapped_transpose", "input_reduce_fusion", "loop_maximum_fusion")
JITS = ("jit_multiply", "jit__normal", "jit_broadcast_in_dim", "jit_train_step")
OPS = ("loop_maximum_fusion", "input_reduce_fusion", "cudnn-conv", "custom-call", "loop_add_fusion", "copy")
SECONDS_AT_MOST = 20  # a guard against work growing as the square of the names (hours), not a benchmark


def _xla_names(count: int) -> list[str]:
    """Distinct names shaped like XLA's under JAX: each program's modules go through a run of
    passes and pipelines (names alike but for the pass, the module or the program's number),
    thunks of the step's ops, the modules themselves."""
    pick = random.Random(0)
    names: dict[str, None] = {}
    while len(names) < count:
        program = pick.randrange(10**6)
        module = pick.choice(JITS) if pick.random() < 0.3 else f"{pick.choice(MODULES)}.{pick.randrange(300)}"
        for stage in pick.sample(PASSES, pick.randrange(4, len(PASSES))):
            kind = pick.choice(("XlaPass", "XlaPassPipeline"))
            names[f"TSL:{kind}:#name={stage},module={module},program_id={program}#"] = None
        names[f"TSL:XlaModule:#hlo_module={module}#"] = None
        names[f"TSL:Thunk:#name=jit(train_step)/jvp(),hlo_op={pick.choice(OPS)}.{pick.randrange(500)},"
              f"unique_hlo_op_id={pick.randrange(10**13)}#"] = None
    return list(names)[:count]


def _assert_told_apart(names: list[str], width: int) -> None:
    started = time.perf_counter()
    labels = telling_names(names, width, kernels=False)
    seconds = time.perf_counter() - started
    assert seconds < SECONDS_AT_MOST, f"{len(names):,} names took {seconds:.1f} s"
    assert len(labels) == len(names)
    too_long = [label for label in labels if len(label) > width]
    assert not too_long, too_long[:5]
    name_of: dict[str, str] = {}
    for name, label in zip(names, labels):
        assert name_of.setdefault(label, name) == name, f"{name!r} and {name_of[label]!r} both read {label!r}"


@pytest.mark.parametrize("width", [64, 28, 16])
def test_ninety_thousand_xla_names_are_told_apart_in_seconds(width):
    _assert_told_apart(_xla_names(90_000), width)


@pytest.mark.parametrize("width", [64, 28])
def test_the_range_names_of_a_real_jax_capture_are_told_apart_in_seconds(real_program, width):
    with sqlite3.connect(real_program("jax-a") / "nsys.sqlite") as export:
        names = [name for (name,) in export.execute(
            "SELECT DISTINCT coalesce(n.text, s.value) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId")
            if name is not None]
    assert len(names) > 80_000
    _assert_told_apart(names, width)


def test_numbered_labels_stay_apart_when_refitted_alike():
    """Two labels each of two names: the second of each, fitted shorter to make room for its
    number, reads "XlaPass:…" both; the second to come gets the next number, not " [2]" again."""
    names = ["XlaPassPipeline:#name=async-to-sync-converter,module=cudnn-conv-bw-input.36,program_id=376316#",
             "XlaPass:#name=async-to-sync-converter,module=cudnn-conv.135,program_id=485527#",
             "XlaPassPipeline:#name=sanitize-constant-names,module=cudnn-conv.135,program_id=485527#",
             "XlaPass:#name=sanitize-constant-names,module=cudnn-conv.154,program_id=288847#"]
    assert telling_names(names, 16, kernels=False) == ["…#name=async-to…", "XlaPass:… [2]", "…#name=sanitize…",
                                                       "XlaPass:… [3]"]
