"""The kit's version, from its installed metadata: what every entry point's --version prints."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "mini-koda-lab"


def kit_version() -> str:
    """The installed distribution's version; a checkout run without installing says so."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "(not installed)"


def version_text() -> str:
    """What --version prints after the program's name: `%(prog)s` and the version."""
    return f"%(prog)s {kit_version()}"
