"""A GPU's ceilings (its peak FLOP rates and bandwidths): what they are, where they are saved, which
apply to a capture, % of peak against them, and measuring them. One module per job:

- peaks: the Ceiling record, the datasheet table per GPU, measured values laid over it. Pure data.
- files: ceilings-<gpu>.json as `nsprof ceilings` saves it, and the copy a capture puts in its manifest.
- resolve: the ceiling that applies to a capture (--ceilings, else its manifest, else the data
  directory, over the datasheet), each value naming its source.
- percent: % of peak of kernel or range metrics. Analyze-level: pure pandas, no I/O.
- measure: measuring them on this GPU. Launch-level: CuPy, loaded when it runs.

The modules span layers, and their imports go one way. peaks, files and resolve are a base module
set: they import no layer (only nsprof.paths, nsprof.errors, nsprof.output), so capture, parse,
analyze, launch and the commands may all use them. percent (analyze) and measure (launch) sit on
top: each imports only the base and its own layer (nsprof.analyze.metrics, nsprof.launch), and no
module of the base imports them. This file imports nothing, so importing one module loads no
other. tests/test_ceilings.py checks each module's imports in a fresh interpreter.
"""
