"""Writing results: whole or not at all, replacing only what nsprof itself wrote (nsprof.output.writing)."""

from nsprof.output.writing import Outputs, check_outputs, give_default_mode, write_atomically, write_outputs, write_set

__all__ = ["Outputs", "check_outputs", "give_default_mode", "write_atomically", "write_outputs", "write_set"]
