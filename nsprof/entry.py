"""The `nsprof` executable: a Ctrl-C at any moment, while the libraries load too, is one line and
exit code 130, never a traceback."""

import signal
import sys


def main() -> None:
    interrupted = []

    def on_interrupt(signum, frame):
        interrupted.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)
    try:
        from nsprof.cli import main as cli_main

        cli_main()
    except KeyboardInterrupt:
        _interrupted()
    except Exception:
        # A library interrupted half-way through loading can fail later with an error of its own
        # (matplotlib once raised ValueError): after a Ctrl-C, that is the interrupt too.
        if interrupted:
            _interrupted()
        raise


def _interrupted() -> None:
    sys.stderr.write("error: interrupted\n")
    sys.exit(130)
