"""A small CNN trained from a torch.utils.data.DataLoader whose Dataset augments each image with NumPy:
a loop for nsprof to find from the GPU work alone (captured with nsys's defaults and no NVTX range of
the program's own), where the host's data pipeline, not the GPU, sets the pace unless worker processes
take it over. The images (3x72x72 uint8, `--steps` x `--batch` of them, fixed seed) are made in memory;
`__getitem__` crops each at random to 3x64x64, flips it, jitters its colours, blurs every channel
along its rows and its columns with np.convolve (`--blur-passes` times), adds noise and normalizes:
about half a millisecond of float32 NumPy work an image, tens of milliseconds a batch. The loader
pins its batches (pin_memory=True); each step copies the batch to the GPU (non_blocking), runs a mini
ResNet (a stem and three residual blocks, batch norm, global pooling) forward and backward, an SGD
step with momentum, and reads the loss with `loss.item()` for logging.

- `--workers 0` (default): the main process augments each batch between the GPU's steps, the GPU idle
  meanwhile (host-bound).
- `--workers N`: N worker processes augment batches ahead of the loop (a prefetch of 2 each), the
  step's wait for its batch short; with 8 clearly faster a step.

`--markers` wraps each iteration (the batch's fetch from the loader included) in an NVTX range
`step` (torch.cuda.nvtx); without it the program opens no NVTX range of its own. The loop runs
`--steps` iterations (one pass over the data), the first `--warmup` untimed (the first waits for the
workers to start); as each step waits for its loss, the time of an iteration (time.perf_counter, from
the previous iteration's end to its own) is the step's time, without an added synchronization. At its
end the program prints one JSON line: program, variant (workersN), iterations, warmup, median_ms,
min_ms, max_ms (over the timed iterations), the first and last losses.

    python3 tests/programs/loop_dataloader.py --workers 0 --steps 30
    python3 tests/programs/loop_dataloader.py --workers 8 --steps 30 --markers
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import time

import numpy as np
import torch
import torch.nn.functional as F
from loop_summary import summary

MEAN = np.float32(0.5)
STD = np.float32(0.25)
BLUR = np.array([1, 6, 15, 20, 15, 6, 1], np.float32) / np.float32(64)  # binomial: a Gaussian's stand-in


class Augmented(torch.utils.data.Dataset):
    """uint8 images, each cropped, flipped, jittered, blurred and normalized on the host when fetched."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, size: int, blur_passes: int, seed: int) -> None:
        self.images, self.labels, self.size, self.blur_passes, self.seed = images, labels, size, blur_passes, seed

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        rng = np.random.default_rng([self.seed, index])  # the same augmentation whichever process draws it
        image = self.images[index]
        top, left = rng.integers(0, image.shape[1] - self.size + 1, size=2)
        crop = image[:, top:top + self.size, left:left + self.size].astype(np.float32) / np.float32(255)
        if rng.random() < 0.5:
            crop = crop[:, :, ::-1]
        scale = rng.uniform(0.8, 1.2, (3, 1, 1)).astype(np.float32)
        shift = rng.uniform(-0.1, 0.1, (3, 1, 1)).astype(np.float32)
        crop = np.ascontiguousarray(crop * scale + shift)
        for _ in range(self.blur_passes):
            for channel in crop:  # a view: blurred in place, along the rows, then along the columns
                channel[...] = np.convolve(channel.ravel(), BLUR, mode="same").reshape(channel.shape)
                channel[...] = np.convolve(channel.T.ravel(), BLUR, mode="same").reshape(channel.T.shape).T
        crop += np.float32(0.02) * rng.standard_normal(crop.shape, dtype=np.float32)
        crop = (crop - MEAN) / STD
        return torch.from_numpy(crop), int(self.labels[index])


class Residual(torch.nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(cout)
        self.conv2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(cout)
        self.skip = torch.nn.Identity() if stride == 1 and cin == cout else torch.nn.Sequential(
            torch.nn.Conv2d(cin, cout, 1, stride, bias=False), torch.nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(y + self.skip(x))


def mini_resnet(classes: int) -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, 1, 1, bias=False), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
        Residual(32, 32, 1), Residual(32, 64, 2), Residual(64, 128, 2),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(128, classes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=0, help="the DataLoader's worker processes")
    parser.add_argument("--steps", type=int, default=30, help="loop iterations, the warm-up included")
    parser.add_argument("--warmup", type=int, default=3, help="the first iterations, not timed")
    parser.add_argument("--markers", action="store_true", help="an NVTX range `step` around each iteration")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--size", type=int, default=64, help="the crop's side; the stored images are 8 pixels larger")
    parser.add_argument("--blur-passes", type=int, default=1)
    parser.add_argument("--classes", type=int, default=10)
    args = parser.parse_args()
    assert args.steps > args.warmup >= 0
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    count = args.steps * args.batch
    images = rng.integers(0, 256, (count, 3, args.size + 8, args.size + 8), dtype=np.uint8)
    labels = rng.integers(0, args.classes, count)
    loader = torch.utils.data.DataLoader(
        Augmented(images, labels, args.size, args.blur_passes, seed=1), batch_size=args.batch, shuffle=True,
        num_workers=args.workers, pin_memory=True, drop_last=True, generator=torch.Generator().manual_seed(0))
    model = mini_resnet(args.classes).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    batches = iter(loader)  # with workers, this starts them
    marks = [time.perf_counter()]
    for _ in range(args.steps):
        with torch.cuda.nvtx.range("step") if args.markers else contextlib.nullcontext():
            x, y = next(batches)
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())  # logging: the host waits for the step
        marks.append(time.perf_counter())
    del batches  # the workers shut down
    times = [b - a for a, b in itertools.pairwise(marks)]
    print(summary("loop_dataloader", f"workers{args.workers}", times, args.warmup, workers=args.workers,
                  first_loss=round(losses[0], 4), last_loss=round(losses[-1], 4)))


if __name__ == "__main__":
    main()
