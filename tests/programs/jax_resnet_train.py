"""A ResNet-50 training loop in plain JAX on synthetic data, as a user would run it, for capturing
real Nsight exports of an XLA program: one jitted step (convolutions through cuDNN, which XLA's
autotuner tries algorithm by algorithm on the first call; batch norm; an SGD update with
momentum), XLA's command buffers (CUDA graphs) and its own NVTX ranges (`TSL:XlaModule:#...#`,
`TSL:Thunk:#...#`, one distinct name per instance), inside a `step` range of the program's own.

    python3 tests/programs/jax_resnet_train.py --steps 20
    python3 tests/programs/jax_resnet_train.py --steps 2 --batch 2 --image 32 --width 8   # a CPU smoke run

`--trace DIR` wraps the loop in jax.profiler.start_trace(DIR, create_perfetto_trace=True) / stop_trace.
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
from program_ranges import range_maker

nvtx_range = range_maker("train")

STAGES = ((3, 64), (4, 128), (6, 256), (3, 512))  # ResNet-50: blocks per stage, bottleneck width


def conv_weights(key, kh: int, kw: int, cin: int, cout: int):
    return jax.random.normal(key, (kh, kw, cin, cout), jnp.float32) * (2.0 / (kh * kw * cin)) ** 0.5


def init(key, width: int, classes: int) -> dict:
    keys = iter(jax.random.split(key, 256))
    scale = width / 64
    params: dict = {"stem": conv_weights(next(keys), 7, 7, 3, int(64 * scale)), "blocks": []}
    cin = int(64 * scale)
    for blocks, mid in STAGES:
        mid = int(mid * scale)
        for index in range(blocks):
            block = {"c1": conv_weights(next(keys), 1, 1, cin, mid), "c2": conv_weights(next(keys), 3, 3, mid, mid),
                     "c3": conv_weights(next(keys), 1, 1, mid, 4 * mid),
                     "g": [jnp.ones(c) for c in (mid, mid, 4 * mid)], "b": [jnp.zeros(c) for c in (mid, mid, 4 * mid)]}
            if index == 0:
                block["proj"] = conv_weights(next(keys), 1, 1, cin, 4 * mid)
            params["blocks"].append(block)
            cin = 4 * mid
    params["head"] = jax.random.normal(next(keys), (cin, classes)) * cin ** -0.5
    return params


def conv(x, w, stride: int = 1):
    return jax.lax.conv_general_dilated(x, w, (stride, stride), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def batch_norm(x, gamma, beta):
    mean = x.mean(axis=(0, 1, 2))
    var = x.var(axis=(0, 1, 2))
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * gamma + beta


def forward(params: dict, images):
    x = jax.nn.relu(conv(images, params["stem"], 2))
    x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    first_of_stage = {sum(b for b, _ in STAGES[:i]) for i in range(1, len(STAGES))}
    for index, block in enumerate(params["blocks"]):
        stride = 2 if index in first_of_stage else 1
        y = jax.nn.relu(batch_norm(conv(x, block["c1"]), block["g"][0], block["b"][0]))
        y = jax.nn.relu(batch_norm(conv(y, block["c2"], stride), block["g"][1], block["b"][1]))
        y = batch_norm(conv(y, block["c3"]), block["g"][2], block["b"][2])
        shortcut = conv(x, block["proj"], stride) if "proj" in block else x
        x = jax.nn.relu(y + shortcut)
    return x.mean(axis=(1, 2)) @ params["head"]


def loss_fn(params: dict, images, labels):
    logits = forward(params, images)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(labels, logits.shape[-1]), axis=-1))


@jax.jit
def train_step(params: dict, momentum: dict, images, labels):
    loss, grads = jax.value_and_grad(loss_fn)(params, images, labels)
    momentum = jax.tree_util.tree_map(lambda m, g: 0.9 * m + g, momentum, grads)
    params = jax.tree_util.tree_map(lambda p, m: p - 0.01 * m, params, momentum)
    return params, momentum, loss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--image", type=int, default=224)
    parser.add_argument("--width", type=int, default=64, help="the stem's channels (ResNet-50: 64)")
    parser.add_argument("--classes", type=int, default=1000)
    parser.add_argument("--trace", metavar="DIR", help="trace the loop with jax.profiler into DIR (a Perfetto trace too)")
    args = parser.parse_args()
    key = jax.random.PRNGKey(0)
    params = init(key, args.width, args.classes)
    momentum = jax.tree_util.tree_map(jnp.zeros_like, params)
    images = jax.random.normal(jax.random.PRNGKey(1), (args.batch, args.image, args.image, 3))
    labels = jax.random.randint(jax.random.PRNGKey(2), (args.batch,), 0, args.classes)
    if args.trace:
        jax.profiler.start_trace(args.trace, create_perfetto_trace=True)
    started = time.perf_counter()
    for step in range(args.steps):
        with nvtx_range("step"):
            params, momentum, loss = train_step(params, momentum, images, labels)
            loss.block_until_ready()
        if step == 0:
            print(f"step 0 (compile and autotune): {time.perf_counter() - started:.1f} s, loss {float(loss):.3f}")
            started = time.perf_counter()
    steady = (time.perf_counter() - started) / max(args.steps - 1, 1)
    if args.trace:
        jax.profiler.stop_trace()
    print(f"{args.steps} steps on {jax.devices()[0].device_kind}: {1e3 * steady:.1f} ms a step after the first, "
          f"loss {float(loss):.3f}")


if __name__ == "__main__":
    main()
