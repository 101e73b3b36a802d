"""Read :class:`~vkbench.site.data.SiteData` once from a results root: the one loader of the site.

Each recorded file is read through its one reader (:func:`vkbench.results.records.read_recorded`);
what the pages derive from it (the changes table, the bug rows, the runtime rows and the runtime
machines' timelines over upstream commits, the navigation from every page's own count) is computed
here once, not once per page, from the results model and the site's data modules (never a page's):
the changes table as events (:func:`vkbench.results.events.explain`) with the stored confirmations
and release bases.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import vkbench.site.pages
from vkbench.paths import RESULTS_ROOT
from vkbench.results import confirmations
from vkbench.results.bug_rows import bug_rows
from vkbench.results.events import explain, read_bases
from vkbench.results.ledger_file import release_names
from vkbench.results.records import read_recorded
from vkbench.results.runtime_timeline import timelines
from vkbench.site.coverage_sets import FOLDER as COVERAGE_FOLDER
from vkbench.site.coverage_sets import stored as stored_coverage
from vkbench.site.data import SiteData
from vkbench.site.navigation import asv_sites, links
from vkbench.site.runtime_rows import POLICY_LATENCY_FOLDER, policy_latency_tables, runtime_rows


def _stored(upstream: Path) -> confirmations.Stored:
    """The stored confirmations of the upstream results; a corrupt file is one line on stderr and the
    pages show every row as unconfirmed (``vkbench changes`` refuses it with a non-zero exit)."""
    try:
        return confirmations.read(confirmations.path_for(upstream))
    except confirmations.ConfirmationsError as error:
        print(f"vkbench.site: skipped {error}", file=sys.stderr)
        return {}


def _bases(path: Path):  # noqa: ANN202 - a ReleaseBases or None
    """The release tags' bases; a corrupt file is one line on stderr (release steps stay unplaced)."""
    try:
        return read_bases(path)
    except ValueError as error:
        print(f"vkbench.site: skipped {error}", file=sys.stderr)
        return None


def load_site_data(html_root: Path, results_root: Path = RESULTS_ROOT, *,
                   coverage_sets: list[dict[str, Any]] | None = None) -> SiteData:
    """Everything the pages under ``html_root`` show, from ``results_root``.

    ``coverage_sets`` replaces the stored ``results_root/coverage`` sets (tests). Files that could not
    be read are reported on stderr once each and left out, as the pages always did.
    """
    recorded = read_recorded(Path(results_root))
    for problem in recorded.problems:
        print(f"vkbench.site: skipped {problem}", file=sys.stderr)
    table = explain(recorded.upstream, recorded.classes, _stored(recorded.upstream.root),
                    _bases(recorded.root / "history" / "release-bases.json"), recorded.runtime_classes)
    bugs = bug_rows(recorded)
    rows = runtime_rows(recorded.releases)
    sets = stored_coverage(recorded.root / COVERAGE_FOLDER) if coverage_sets is None else coverage_sets
    sites = asv_sites(Path(html_root))
    data = SiteData(recorded, table, bugs, release_names(recorded.ledger), rows,
                    policy_latency_tables(recorded.root / POLICY_LATENCY_FOLDER), sets, sites,
                    runtime_history=timelines(recorded.upstream, recorded.runtime_classes))
    data.links = links(sites, [page.link(data) for page in vkbench.site.pages.PAGES])
    return data
