"""Help texts of the options several commands share (--from, --all, --ceilings)."""

from nsprof.paths import DATA_DIR_ENV, PROFILES_DIR

FROM_HELP = ("A profile directory, a directory holding them (searched at any depth), or one nsys or ncu file "
             f"(.nsys-rep, .sqlite, .ncu-rep, .csv); repeatable. Default: {PROFILES_DIR}/.")
ALL_HELP = "Use every profile's stages; by default each stage (and size) comes from the latest profile that has it."
CEILINGS_HELP = ("Measured ceilings: a file saved by `nsprof ceilings`, or the directory holding ceilings-<gpu>.json. "
                 "Default: those copied into the profile's manifest when it was captured, else the file `nsprof ceilings` "
                 f"saved in nsprof's data directory (${DATA_DIR_ENV}, else ~/.local/share/nsprof on Linux), never the "
                 "current directory. Values not measured come from the datasheet.")
