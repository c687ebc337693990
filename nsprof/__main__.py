"""`python -m nsprof`: the command line (nsprof.entry keeps a Ctrl-C during start-up to one line)."""

from nsprof.entry import main

main()
