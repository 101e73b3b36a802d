"""The site's navigation: the asv sites under the html root and the links every page header shows.

The links are built once per site (:func:`links`, from the counts of what each page lists), so
the dashboard and ``make_offline`` never disagree on what a page is called or holds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

#: asv sites that may live under the html root, in the order the navigation lists them.
SITES = ("releases", "upstream")
ABOUT = {
    "releases": "installed-release ledger: one commit per recorded ExecuTorch release (vkbench record)",
    "upstream": "upstream commit ranges measured by asv run (aot/full build modes)",
}


@dataclass(frozen=True)
class Link:
    """One navigation entry: where it points, its title and what a visitor finds there."""

    href: str
    title: str
    about: str


@dataclass(frozen=True)
class AsvSite:
    """An ``asv publish`` output under the html root, as its ``index.json`` summarizes it."""

    name: str
    benchmarks: int = 0
    commits: int = 0

    @classmethod
    def read(cls, folder: Path) -> AsvSite:
        """The site in ``folder``; zero counts when its ``index.json`` is missing or unreadable."""
        try:
            index = json.loads((folder / "index.json").read_text())
        except (OSError, json.JSONDecodeError):
            return cls(folder.name)
        return cls(folder.name, len(index.get("benchmarks", {})), len(index.get("revision_to_hash", {})))


def asv_sites(html_root: Path) -> list[AsvSite]:
    """The asv sites published under ``html_root`` (those with an ``index.html``), in :data:`SITES` order."""
    return [AsvSite.read(html_root / name) for name in SITES if (html_root / name / "index.html").exists()]


def links(sites: list[AsvSite], pages: list[Link | None]) -> list[Link]:
    """The navigation: the asv sites, then each linked page's own entry (``Page.link``), in order."""
    found = [Link(f"{site.name}/index.html", site.name, f"{ABOUT.get(site.name, '')} "
                  f"({site.benchmarks} benchmarks, {site.commits} commits)") for site in sites]
    return found + [link for link in pages if link is not None]
