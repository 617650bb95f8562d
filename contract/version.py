"""The version of affdir: the one number the package, every command's `--version`, the
edge's and the sync worker's `/healthz` and their `affdir_build_info` metric report.

A constant in the source, not the installed package's metadata: pyproject.toml reads it
from here (`dynamic = ["version"]`), and a plain checkout run without installing
(`python -m edge`, `python build.py`) reports the same number as an installed one. It numbers
releases of the software (CHANGELOG.md); the API's own version is the OpenAPI document's
`info.version` (`contract.openapi.DOCUMENT_VERSION`, docs/api.md#versioning).
"""

from __future__ import annotations

VERSION = "1.0.0"
# The gauge both processes export (value 1, the version as its label): one series per
# running version, whichever process serves it.
BUILD_INFO_METRIC = "affdir_build_info"


def version_line(prog: str) -> str:
    """What `--version` prints: `<prog> <version>`."""
    return f"{prog} {VERSION}"
