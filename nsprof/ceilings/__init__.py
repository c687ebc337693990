"""A GPU's ceilings (its peak FLOP rates and bandwidths): what they are, where they are saved and
which apply to a capture. One module per job:

- peaks: the Ceiling record, the datasheet table per GPU, measured values laid over it. Pure data.
- files: ceilings-<gpu>.json as `nsprof ceilings` saves it, and the copy a capture puts in its manifest.
- types: the document `nsprof ceilings --json` prints and saves, as types (a MeasuredCeiling each).
- resolve: the ceiling that applies to a capture (--ceilings, else its manifest, else the data
  directory, over the datasheet), each value naming its source.

They import no layer above them (only nsprof.paths, nsprof.errors, nsprof.output), so capture,
parse, analyze, launch and the commands may all use them. Measuring them runs kernels, and lives in
the launch layer (nsprof.launch.gpu_ceilings, nsprof.ladder_runs.cpu_ceilings); % of peak is analysis
(nsprof.analyze.percent_of_peak). This file imports nothing, so importing one module loads no
other.
"""
