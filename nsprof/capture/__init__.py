"""Capture: run stages under Nsight Systems (nsys) and Nsight Compute (ncu) into a profile directory.

One job per module: `request` (what to capture), `tools` (finding nsys/ncu), `metrics` (ncu metric
presets), `commands` (the exact argv), `layout` (the directory), `run` (one child process),
`output` (what the tools print), `manifest` (manifest.json), `checks` (prerequisites, `doctor`),
`session` (a whole capture).
"""

from nsprof.capture.request import ProfileRequest, build_request
from nsprof.capture.session import ProfileInterrupted, VerificationFailed, capture, dry_run, run_capture

__all__ = ["ProfileRequest", "build_request", "capture", "dry_run", "run_capture", "ProfileInterrupted",
           "VerificationFailed"]
