"""The large real captures under tests/data and profiles/examples are kept xz-packed beside where they
belong (nsys.sqlite.xz; a SQLite export packs 5-10x), so that the repository, and the working tree
sent to the GPU machine, stay small. nsprof reads them packed (nsprof.parse.packed), so a fresh
clone's examples work as they are; the tests also open some with plain SQL, so running them unpacks
each beside its packed file (tests/conftest.py); so does this script:

    python3 tests/packed_data.py             # unpack every packed file beside itself (once)
    python3 tests/packed_data.py --pack F..  # pack files of tests/data or profiles/examples (maintainers)

tests/packed-data.sha256 holds each unpacked file's hash, by its path in the repository: a file
whose hash differs (missing, or left from an older checkout) is unpacked again, through a
temporary file renamed into place. Each tree's .gitignore lists its unpacked files, so git never
tracks them twice.
"""

from __future__ import annotations

import argparse
import hashlib
import lzma
import os
import shutil
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
TREES = (TESTS / "data", REPO / "profiles" / "examples")  # where packed files may lie
SUMS = TESTS / "packed-data.sha256"


def _sums() -> dict[str, str]:
    if not SUMS.is_file():
        return {}
    return {name: digest for digest, name in (line.split("  ", 1) for line in SUMS.read_text().splitlines() if line)}


def _digest(path: Path) -> str:
    hasher = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(block)
    return hasher.hexdigest()


def unpack() -> list[Path]:
    """Unpack each packed file whose unpacked copy is missing or differs; the files unpacked."""
    done = []
    for name, digest in _sums().items():
        target = REPO / name
        if target.is_file() and _digest(target) == digest:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.{os.getpid()}.part")
        with lzma.open(REPO / f"{name}.xz") as packed, open(partial, "wb") as out:
            shutil.copyfileobj(packed, out, 1 << 20)
        os.replace(partial, target)
        done.append(target)
    return done


def pack(paths: list[Path]) -> None:
    """Pack files of TREES beside themselves (xz), record their hashes, ignore the unpacked
    copies and untrack them."""
    sums = _sums()
    for path in paths:
        path = path.resolve()
        if not any(path.is_relative_to(tree) for tree in TREES):
            raise SystemExit(f"{path}: not under {' or '.join(str(tree) for tree in TREES)}")
        name = path.relative_to(REPO).as_posix()
        with open(path, "rb") as source, lzma.open(REPO / f"{name}.xz", "wb", preset=9 | lzma.PRESET_EXTREME) as out:
            shutil.copyfileobj(source, out, 1 << 20)
        sums[name] = _digest(path)
        subprocess.run(["git", "rm", "-q", "--cached", str(path)], cwd=REPO, check=False)
    SUMS.write_text("".join(f"{digest}  {name}\n" for name, digest in sorted(sums.items())))
    for tree in TREES:
        inside = sorted((REPO / name).relative_to(tree).as_posix() for name in sums if (REPO / name).is_relative_to(tree))
        (tree / ".gitignore").write_text("# unpacked beside their .xz by tests/packed_data.py (the tests run it)\n"
                                         + "".join(f"/{name}\n" for name in inside))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pack", nargs="+", type=Path, metavar="FILE",
                        help="pack these files of tests/data or profiles/examples")
    args = parser.parse_args()
    if args.pack:
        pack(args.pack)
    else:
        print(f"unpacked {len(unpack())} files beside their packed copies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
