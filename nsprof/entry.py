"""The `nsprof` executable: imports the command line, so that a Ctrl-C while the libraries load is
one line and exit code 130 like a Ctrl-C anywhere else, never a traceback."""

import sys


def main() -> None:
    try:
        from nsprof.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        sys.exit(130)
    cli_main()
