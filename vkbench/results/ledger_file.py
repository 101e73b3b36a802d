"""The one reader (and writer) of ``results/ledger.json``: the releases recorded offline, in order.

``vkbench record`` files a release's results under a synthetic "ledger" commit (asv needs a git
commit per point); the manifest keeps, per release, its version, the upstream commit it was built
from (``git_version``), its date and that ledger commit. :mod:`vkbench.runs.ledger` rebuilds the
ledger repo from it; the bug list and the dashboard read it to name release results.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from vkbench.core.versions import public_version

FILE_NAME = "ledger.json"


@dataclass
class Release:
    """One ExecuTorch release recorded offline."""

    version: str  #: as installed: ``1.5.1+cpu``
    git_version: str | None  #: the upstream commit the release was built from
    date: str  #: ISO 8601, UTC
    commit: str | None = None  #: its ledger commit (what asv files the results under)

    @property
    def short_version(self) -> str:
        """``1.5.1`` for ``1.5.1+cpu``."""
        return public_version(self.version)


def manifest_path(results_root: Path) -> Path:
    return results_root / FILE_NAME


def read_ledger(results_root: Path) -> list[Release]:
    """The releases of ``results_root/ledger.json`` ([] when there is none).

    A file that is present but unreadable raises ``ValueError`` naming it: a ledger is never
    silently treated as empty, which would re-key or drop recorded results.
    """
    path = manifest_path(results_root)
    if not path.exists():
        return []
    try:
        return [Release(**entry) for entry in json.loads(path.read_text())["releases"]]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path}: not a readable ledger ({type(error).__name__}: {error})") from error


def write_ledger(results_root: Path, releases: list[Release], about: str) -> Path:
    """Write (replace) the manifest; ``about`` is its first line of prose."""
    path = manifest_path(results_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"about": about, "releases": [asdict(r) for r in releases]}
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def release_names(releases: list[Release]) -> dict[str, str]:
    """Ledger commit and upstream ``git_version`` (8 characters) -> release version (``1.5.1``)."""
    names: dict[str, str] = {}
    for release in releases:
        for key in (release.commit, release.git_version):
            if key:
                names[key[:8]] = release.short_version
    return names
