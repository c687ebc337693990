"""Running one tool command as a child process: its output streams into the log file and through a
ToolOutput (for the progress display); Ctrl-C and fatal tool errors stop the child cleanly."""

from __future__ import annotations

import codecs
import contextlib
import os
import selectors
import signal
import subprocess
import threading
from collections.abc import Callable
from typing import IO, BinaryIO

from nsprof.capture.commands import Command
from nsprof.capture.output import ToolOutput
from nsprof.errors import NsprofError

STOP_GRACE_S = 30.0  # time for nsys/ncu to finish writing what they have after SIGINT (a second Ctrl-C cuts it short)
POLL_S = 0.1


def run_command(command: Command, output: ToolOutput, on_output: Callable[[], None] = lambda: None) -> int:
    """Run `command` to the end and return its exit code.

    The child gets its own process group, so a Ctrl-C in the terminal reaches only nsprof, which then
    sends the tool exactly one SIGINT (nsys and ncu finish their report on it). The child is also stopped
    as soon as `output` reports that ncu cannot read the counters: the rest of the run would be wasted.
    A thread copies the output, so that a Ctrl-C in the main thread never loses a chunk that was read.
    KeyboardInterrupt propagates once the child is stopped.
    """
    command.log.parent.mkdir(parents=True, exist_ok=True)  # runs/ of a capture with --runs
    with open(command.log, "ab") as log, \
            (open(command.stdout, "wb") if command.stdout else contextlib.nullcontext()) as stdout_file:
        log.write(f"$ {command.shell}\n".encode())
        log.flush()
        try:
            proc = subprocess.Popen(
                list(command.argv), stdin=subprocess.DEVNULL, env={**os.environ, **dict(command.env)} if command.env else None,
                stdout=stdout_file or subprocess.PIPE,
                stderr=subprocess.PIPE if stdout_file else subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as err:
            raise NsprofError(f"could not start {command.argv[0]} ({err})",
                              f"check that it is a working {command.tool} executable") from None
        pipe = proc.stderr if stdout_file else proc.stdout
        assert pipe is not None  # the stream opened with subprocess.PIPE above
        reader = _Reader(pipe, log, output, on_output)
        reader.start()
        try:
            while proc.poll() is None:
                if output.permission_denied:
                    stop(proc)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=POLL_S)
            return proc.returncode
        except KeyboardInterrupt:
            stop(proc)
            raise
        finally:
            if proc.poll() is None:
                stop(proc)
            reader.finish()
            pipe.close()


class _Reader(threading.Thread):
    """Copies the child's output to the log and the ToolOutput until the pipe closes, or, once the
    child has exited, until the pipe stays quiet (a helper process may keep it open)."""

    def __init__(self, pipe: IO[bytes], log: BinaryIO, output: ToolOutput, on_output: Callable[[], None]):
        super().__init__(daemon=True)
        self.pipe, self.log, self.output, self.on_output = pipe, log, output, on_output
        self.child_done = threading.Event()

    def run(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        fd = self.pipe.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                if selector.select(timeout=POLL_S):
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        break
                    self.log.write(chunk)
                    self.log.flush()
                    self.output.feed(decoder.decode(chunk))
                    self.on_output()
                elif self.child_done.is_set():
                    break
        self.output.feed(decoder.decode(b"", final=True))
        self.output.close()

    def finish(self) -> None:
        self.child_done.set()
        self.join()


def stop(proc: subprocess.Popen, grace_s: float = STOP_GRACE_S) -> None:
    """SIGINT to the child's process group (tool and workload), as a terminal Ctrl-C would send;
    SIGTERM, then SIGKILL, if it does not exit in time. A second Ctrl-C skips the wait."""
    try:
        for sig, wait_s in ((signal.SIGINT, grace_s), (signal.SIGTERM, 5.0), (signal.SIGKILL, None)):
            _signal_group(proc, sig)
            try:
                proc.wait(timeout=wait_s)
                return
            except subprocess.TimeoutExpired:
                continue
    except KeyboardInterrupt:
        _signal_group(proc, signal.SIGKILL)
        proc.wait()
        raise


def _signal_group(proc: subprocess.Popen, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
