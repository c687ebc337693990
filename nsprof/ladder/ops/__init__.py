"""The ops nsprof runs, one module each: adding a ladder is its module here, its kernels under
kernels/<op>/, its tests and its docs."""

from __future__ import annotations

from nsprof.ladder.ops import hgemm, sgemm, sgemv

OPS = {op.name: op for op in (sgemm.OP, hgemm.OP, sgemv.OP)}
