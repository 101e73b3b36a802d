"""Read :class:`~vkbench.site.data.SiteData` once from a results root: the one loader of the site.

Each recorded file is read through its one reader (:func:`vkbench.results.records.read_recorded`);
what the pages derive from it (the changes table, the bug rows, the runtime rows, the navigation)
is computed here once, not once per page.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from vkbench.paths import RESULTS_ROOT
from vkbench.results.bugs import bug_rows
from vkbench.results.changes import changes
from vkbench.results.ledger_file import release_names
from vkbench.results.records import read_recorded
from vkbench.site.coverage import FOLDER as COVERAGE_FOLDER
from vkbench.site.coverage import stored as stored_coverage
from vkbench.site.data import SiteData
from vkbench.site.navigation import asv_sites, links
from vkbench.site.runtime_page import POLICY_LATENCY_FOLDER, policy_latency_tables, runtime_rows


def load_site_data(html_root: Path, results_root: Path = RESULTS_ROOT, *,
                   coverage_sets: list[dict[str, Any]] | None = None) -> SiteData:
    """Everything the pages under ``html_root`` show, from ``results_root``.

    ``coverage_sets`` replaces the stored ``results_root/coverage`` sets (tests). Files that could not
    be read are reported on stderr once each and left out, as the pages always did.
    """
    recorded = read_recorded(Path(results_root))
    for problem in recorded.problems:
        print(f"vkbench.site: skipped {problem}", file=sys.stderr)
    table = changes(recorded.upstream, recorded.classes)
    bugs = bug_rows(recorded)
    rows = runtime_rows(recorded.releases)
    sets = stored_coverage(recorded.root / COVERAGE_FOLDER) if coverage_sets is None else coverage_sets
    sites = asv_sites(Path(html_root))
    return SiteData(recorded, table, bugs, release_names(recorded.ledger), rows,
                    policy_latency_tables(recorded.root / POLICY_LATENCY_FOLDER), sets, sites,
                    links(sites, changes=len(table.changes), coverage_sets=len(sets), runtime_rows=len(rows),
                          bugs=len(bugs)))
