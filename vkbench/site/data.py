"""The site's data: :class:`SiteData`, everything the pages show, read once per publish.

Every page (:class:`~vkbench.site.page.Page`) renders from this object and reads nothing itself,
so a publish reads each recorded file once, computes the changes table and the bug rows once,
and every page agrees with every other on the same numbers. :func:`vkbench.site.load.load_site_data`
fills it from one results root.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vkbench.execution.outcome import Outcome
from vkbench.results.bug_rows import BugRow
from vkbench.results.changes import Changes
from vkbench.results.records import Recorded
from vkbench.results.runtime_timeline import MachineTimeline
from vkbench.site.navigation import AsvSite, Link


@dataclass
class SiteData:
    """What the pages need, from one results root and the asv sites under one html root."""

    recorded: Recorded  #: the results root read once (releases, upstream, ledger, survey, classes, ...)
    changes: Changes  #: every step of the upstream counts, attributed with the recorded classes
    bugs: list[BugRow]  #: the bug list's rows
    release_names: dict[str, str]  #: ledger commit and upstream ``git_version`` (8 chars) -> ``1.5.1``
    runtime_rows: list[dict[str, Any]]  #: per result file of the releases with runtime values
    policy_runs: list[tuple[str, list[Outcome]]]  #: ``runtime/policy-latency-*.json``: runs outside asv
    coverage_sets: list[dict[str, Any]]  #: ``coverage/*.json``: coverage per ExecuTorch commit
    sites: list[AsvSite]  #: the asv sites published under the html root
    #: the navigation every page header shows (set once the data is whole: each page counts from it)
    links: list[Link] = field(default_factory=list)
    #: ``upstream/``'s runtime machines: rungs and step limits over commits, in runtime-class order.
    runtime_history: list[MachineTimeline] = field(default_factory=list)

    @property
    def results_root(self) -> Path:
        return self.recorded.root

    def has_site(self, name: str) -> bool:
        """Whether the asv site ``name`` (``releases``, ``upstream``) is published next to the pages."""
        return any(site.name == name for site in self.sites)
