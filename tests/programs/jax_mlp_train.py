"""A small MLP classifier trained in plain JAX on synthetic data, for capturing real Nsight exports
of an XLA program that compiles in seconds: one jitted step (matrix products, layer norm, GELU,
softmax cross-entropy, SGD with momentum), XLA's own NVTX ranges inside a `step` range of the
program's own (with `--no-markers` the program opens no range of its own, for finding its steps from
the GPU work alone; XLA's stay). Prints the loss of the first and last step (it must fall).

    python3 tests/programs/jax_mlp_train.py --steps 30
    python3 tests/programs/jax_mlp_train.py --steps 30 --no-markers
"""

from __future__ import annotations

import argparse
import contextlib
import sys

import jax
import jax.numpy as jnp
from program_ranges import range_maker

nvtx_range = range_maker("train")


def init(key, sizes: list[int]) -> list[dict]:
    keys = jax.random.split(key, len(sizes) - 1)
    return [{"w": jax.random.normal(k, (m, n), jnp.float32) * (2.0 / m) ** 0.5, "b": jnp.zeros((n,), jnp.float32),
             "scale": jnp.ones((n,), jnp.float32)} for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def forward(params: list[dict], x):
    for layer in params[:-1]:
        x = x @ layer["w"] + layer["b"]
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        x = jax.nn.gelu((x - mean) * jax.lax.rsqrt(var + 1e-5) * layer["scale"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, labels):
    logits = forward(params, x)
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1))


@jax.jit
def train_step(params, momentum, x, labels):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
    momentum = jax.tree_util.tree_map(lambda m, g: 0.9 * m + g, momentum, grads)
    params = jax.tree_util.tree_map(lambda p, m: p - 0.05 * m, params, momentum)
    return params, momentum, loss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--classes", type=int, default=100)
    parser.add_argument("--no-markers", action="store_true", help="no NVTX range `step` of the program's own")
    args = parser.parse_args()
    step_range = (lambda name: contextlib.nullcontext()) if args.no_markers else nvtx_range
    params = init(jax.random.PRNGKey(0), [args.width] * args.layers + [args.classes])
    momentum = jax.tree_util.tree_map(jnp.zeros_like, params)
    x = jax.random.normal(jax.random.PRNGKey(1), (args.batch, args.width))
    labels = jax.random.randint(jax.random.PRNGKey(2), (args.batch,), 0, args.classes)
    losses = []
    for _ in range(args.steps):
        with step_range("step"):
            params, momentum, loss = train_step(params, momentum, x, labels)
            losses.append(float(loss))  # the host waits for each step, as a logging loop does
    print(f"{args.steps} steps on {jax.devices()[0].device_kind}: loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    return 0 if losses[-1] < losses[0] else 1


if __name__ == "__main__":
    sys.exit(main())
