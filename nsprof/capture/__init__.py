"""Capture: run stages under Nsight Systems (nsys) and Nsight Compute (ncu) into a profile directory.

One job per module: `request` (what to capture), `tools` (finding nsys/ncu), `metrics` (ncu metric
presets), `commands` (the exact argv), `layout` (the directory), `run` (one child process),
`output` (what the tools print), `manifest` (manifest.json), `checks` (prerequisites, `doctor`),
`session` (a whole capture), `program` (capturing the user's own program).

Import what you need from its module (nsprof.capture.session.capture, ...): the package itself
imports nothing, so that the command line's help loads no more than it shows.
"""
