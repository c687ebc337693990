"""Which ceilings apply to a capture, and where each value came from: --ceilings, else the
profiles' manifests, else the data directory, laid over the datasheet (resolve_ceiling). Every
command that shows a % of peak or a roof gets its ceiling here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nsprof.ceilings.files import is_ceilings_document, named_ceilings, saved_ceilings
from nsprof.ceilings.peaks import Ceiling, ceiling_for, datasheet_ceiling, measured_on
from nsprof.errors import ParseError


def resolve_ceiling(gpu_name: str | None, location: Path | None = None,
                    manifests: Sequence[dict | None] = ()) -> Ceiling | None:
    """The GPU's ceilings as every command uses them: the datasheet's, with measured values laid
    over them (nsprof.ceilings.peaks.ceiling_for) from the first of

    1. `location` (--ceilings): a file `nsprof ceilings` saved, or a directory holding ceilings-<gpu>.json;
    2. the profiles' `manifests` (oldest first): the newest holding ceilings measured on this GPU,
       copied there at capture;
    3. ceilings-<gpu>.json in nsprof's data directory (nsprof.paths.data_dir).

    Never the current directory. Each measured value's source ends with where it was found. None
    when neither the datasheet nor a measurement knows the GPU. Raises ParseError for a --ceilings
    path that does not exist, or a file or manifest entry that is not a ceilings document."""
    if location is not None:
        found = named_ceilings(location, gpu_name)
        return ceiling_for(gpu_name, found[0], f"{found[1]} (--ceilings)") if found else datasheet_ceiling(gpu_name)
    for manifest in reversed(manifests):
        document = manifest_ceilings(manifest)
        if measured_on(document, gpu_name):
            return ceiling_for(gpu_name, document, "the profile's manifest")
    found = saved_ceilings(gpu_name)
    return ceiling_for(gpu_name, found[0], str(found[1])) if found else datasheet_ceiling(gpu_name)


def manifest_ceilings(manifest: dict | None) -> dict | None:
    """The ceilings document a capture copied into its manifest ("ceilings"), None where it has none."""
    document = (manifest or {}).get("ceilings")
    if document is None:
        return None
    if not is_ceilings_document(document):
        raise ParseError("a profile's manifest.json holds \"ceilings\" that are not what `nsprof ceilings` saves",
                         "remove that entry, or pass --ceilings")
    return document
