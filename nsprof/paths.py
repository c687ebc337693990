"""Where nsprof reads and writes by default, shared by every layer (no nsprof imports: the command
line names these in its help before any library loads)."""

import errno
import os
import re
import stat
from pathlib import Path

PROFILES_DIR = Path("profiles")  # the default --from: where `nsprof profile` and `nsprof bench` write
REPORTS_DIR = Path("reports")  # where roofline, report and timeline write by default
DATA_DIR_ENV = "NSPROF_DATA_DIR"  # overrides data_dir() (tests, or a shared location for a cluster)


def shown_path(path: Path) -> str:
    """`path` as a user would type it here: relative to the current directory when it lies below
    it (nsprof's own examples are found by absolute path), else as it is."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def gpu_slug(gpu_name: str) -> str:
    """'NVIDIA H200' -> 'nvidia-h200': the GPU's part of a measured ceilings file name."""
    return re.sub(r"[^a-z0-9]+", "-", gpu_name.lower()).strip("-") or "gpu"


def data_dir() -> Path:
    """What belongs to the machine rather than to a working directory (measured ceilings):
    $NSPROF_DATA_DIR if set, else the user's data directory (~/.local/share/nsprof on Linux)."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override).expanduser()
    try:
        import platformdirs  # imported here: only the commands that read or save ceilings need it
    except ImportError:
        # The benchmark GPU machines have no platformdirs and cannot install it; this is where it
        # would point on Linux (XDG base directories), so both find the same files.
        xdg = os.environ.get("XDG_DATA_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "share"
        return base / "nsprof"
    return platformdirs.user_data_path("nsprof", appauthor=False)


def missing_reason(path: Path) -> str:
    """Why `path` cannot be opened, in words: a symbolic link that loops or points nowhere says so
    (Path.exists() is False for both, and "no such file" would send the user looking for a file)."""
    try:
        os.stat(path)
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "symlink loop (a link that leads back to itself)"
        if os.path.islink(path):
            return f"broken symlink (to {os.readlink(path)}, which does not exist)"
        return err.strerror.lower() if err.strerror else "no such file or directory"
    return "no such file or directory"


def special_file_reason(path: Path) -> str | None:
    """What `path` is when it exists but is neither a regular file nor a directory (reading a FIFO
    waits for a writer forever, /dev/zero never ends), in words; None for files and directories."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # missing: missing_reason says why
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kinds = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    kind = next((words for test, words in kinds if test(mode)), "not a regular file")
    return f"{kind}, not a regular file" if kind != "not a regular file" else kind

