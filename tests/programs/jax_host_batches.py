"""A JAX MLP classifier trained on batches the host prepares, traced by jax.profiler as JAX users
trace: the program for nsprof's reader of jax.profiler's output (its Chrome-format traces). Each
step the host makes a batch with numpy (random features, normalized: about 40 ms), the jitted
step (jax_mlp_train.py's MLP: matrix products, layer norm, GELU, softmax cross-entropy, SGD with
momentum) runs on it, and the loss is read for logging.

- `--variant sync` (default): the host reads each step's loss (`float(loss)`) before it makes the
  next batch: the GPU waits while the host prepares data, and the host waits while the GPU runs.
- `--variant overlap`: the host makes the next batch while the step runs (JAX dispatches the step
  and returns at once) and reads a step's loss only after that. No faster here: the step's GPU work
  is about 1 ms of the 42, so there is little to overlap the batch with.
- `--variant workers`: the fix. `--workers` threads make the batches (numpy's generators and
  reductions release the GIL), `--workers` batches ahead of the step that takes them: the batch is
  off the step's critical path. Each batch has its own generator (seeded by its index), so its
  numbers differ from the other variants' while its work is the same.
- `--wider-input`: the first layer takes twice the input features (its products twice the work, the
  rest unchanged): a planted change, one op made slower, for A/B tests.

`--trace DIR` wraps the loop in jax.profiler.start_trace(DIR, create_perfetto_trace=True) /
stop_trace (compilation, in the first step, included); `--markers` names each step with
jax.profiler.StepTraceAnnotation("train", step_num=i). The program prints one JSON line last:
iterations, warm-up, median/min/max ms per step (time.perf_counter from one step's end to the next's,
the first `--warmup` untimed), the first and last loss.

    python3 tests/programs/jax_host_batches.py --steps 30 --trace /tmp/jax-trace
    python3 tests/programs/jax_host_batches.py --variant workers --steps 30
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import time
from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp
import numpy as np
from jax_mlp_train import init, loss_fn  # the same MLP
from loop_summary import summary


@jax.jit
def train_step(params, momentum, x, labels):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
    momentum = jax.tree_util.tree_map(lambda m, g: 0.9 * m + g, momentum, grads)
    params = jax.tree_util.tree_map(lambda p, m: p - 0.02 * m, params, momentum)
    return params, momentum, loss


def batch(rng: np.random.Generator, size: int, features: int, classes: int, centers: np.ndarray):
    """A batch made on the host: labels, features around each label's center, normalized per row."""
    labels = rng.integers(0, classes, size)
    x = centers[labels] + rng.standard_normal((size, features), dtype=np.float32)
    x = (x - x.mean(1, keepdims=True)) / (x.std(1, keepdims=True) + 1e-5)
    return x.astype(np.float32), labels.astype(np.int32)


def prefetched(steps: int, workers: int, seed: int, *shape):
    """The batches of `steps` steps made by `workers` threads, `workers` ahead of the one taken."""
    def make(index: int):
        return batch(np.random.default_rng([seed, index]), *shape)

    with ThreadPoolExecutor(workers) as pool:
        pending = [pool.submit(make, index) for index in range(min(workers, steps))]
        for index in range(steps):
            ready = pending.pop(0).result()
            if index + workers < steps:
                pending.append(pool.submit(make, index + workers))
            yield ready


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=("sync", "overlap", "workers"), default="sync")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--workers", type=int, default=8, help="--variant workers: threads making batches")
    parser.add_argument("--warmup", type=int, default=3, help="the first steps, not timed")
    parser.add_argument("--batch", type=int, default=2048)
    parser.add_argument("--features", type=int, default=1024)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--classes", type=int, default=100)
    parser.add_argument("--wider-input", action="store_true", help="twice the input features (a planted change)")
    parser.add_argument("--trace", metavar="DIR", help="trace the loop with jax.profiler into DIR")
    parser.add_argument("--markers", action="store_true", help="jax.profiler.StepTraceAnnotation per step")
    args = parser.parse_args()
    assert args.steps > args.warmup >= 0
    features = 2 * args.features if args.wider_input else args.features
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((args.classes, features), dtype=np.float32)
    params = init(jax.random.PRNGKey(0), [features] + [args.width] * args.layers + [args.classes])
    momentum = jax.tree_util.tree_map(jnp.zeros_like, params)

    def step_scope(index: int):
        return jax.profiler.StepTraceAnnotation("train", step_num=index) if args.markers else contextlib.nullcontext()

    if args.trace:
        jax.profiler.start_trace(args.trace, create_perfetto_trace=True)
    losses: list[float] = []
    marks = [time.perf_counter()]
    batches = prefetched(args.steps + 1, args.workers, 1, args.batch, features, args.classes, centers) \
        if args.variant == "workers" else None
    x, labels = next(batches) if batches else batch(rng, args.batch, features, args.classes, centers)
    pending = None
    for index in range(args.steps):
        with step_scope(index):
            params, momentum, loss = train_step(params, momentum, x, labels)
            if batches is not None:
                losses.append(float(loss))  # the host waits for the step; the next batch is made already
                x, labels = next(batches)
            elif args.variant == "sync":
                losses.append(float(loss))  # the host waits for the step, then makes the next batch
                x, labels = batch(rng, args.batch, features, args.classes, centers)
            else:
                x, labels = batch(rng, args.batch, features, args.classes, centers)  # while the step runs
                if pending is not None:
                    losses.append(float(pending))
                pending = loss
        marks.append(time.perf_counter())
    if pending is not None:
        losses.append(float(pending))
    if args.trace:
        jax.profiler.stop_trace()
    times = [b - a for a, b in itertools.pairwise(marks)]
    print(summary("jax_host_batches", args.variant, times, args.warmup, wider_input=args.wider_input,
                  first_loss=round(losses[0], 4), last_loss=round(losses[-1], 4)))


if __name__ == "__main__":
    main()
