"""The contract of a site page: one :class:`Page` per page, listed once in :mod:`vkbench.site.pages`.

A page renders its HTML from the publish's :class:`~vkbench.site.data.SiteData` alone (it reads no
file itself), says what the navigation calls it and how many things it lists, and is written by
:meth:`Page.write`; ``make_offline`` writes and reports every page by looping over them, and the
navigation links them, so adding a page is one new module with a ``PAGE`` and one line in
:data:`vkbench.site.pages.PAGES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vkbench.site.navigation import Link

if TYPE_CHECKING:
    from vkbench.site.data import SiteData


@dataclass(frozen=True)
class Page:
    """One page of the site."""

    file: str  #: written under the html root: ``changes.html``
    title: str  #: what the navigation calls it
    about: str  #: what a visitor finds there, one line
    render: Callable[[SiteData], str]  #: the whole HTML, from the publish's data alone
    #: how many things it lists, for the navigation (``3 events, 39 steps``); None: the navigation does
    #: not link it (the dashboard, which holds the navigation)
    shows: Callable[[SiteData], str] | None = None

    def write(self, html_root: Path, data: SiteData) -> Path:
        """Render into ``html_root/<file>``; return the path."""
        path = Path(html_root) / self.file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.render(data))
        return path

    def link(self, data: SiteData) -> Link | None:
        """The navigation's entry for this page, with its count; None when it is not linked."""
        if self.shows is None:
            return None
        return Link(self.file, self.title, f"{self.about} ({self.shows(data)})")
