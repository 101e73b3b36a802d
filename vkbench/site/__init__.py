"""The published site, made to work offline: vendored assets, the dashboard and the pages around it.

:func:`make_offline` is called after every ``asv publish`` (``vkbench
publish``/``record`` call it for ``html/releases``; the workflow and the
docs call ``vkbench site make-offline html`` for ``html/upstream``):

1. copies ``vkbench/site/vendor`` (npm-pinned jQuery, Flot, Bootstrap, ... see
   :mod:`vkbench.site.assets`) into each asv site under ``<site>/vendor/`` and
   rewrites that site's ``index.html`` to load them instead of CDN URLs;
2. reads what the pages show once, from one results root, into
   :class:`~vkbench.site.data.SiteData` (:func:`vkbench.site.load.load_site_data`);
3. writes every page of :data:`vkbench.site.pages.PAGES` from it (each a :class:`~vkbench.site.page.Page`):
   ``changes.html`` (:mod:`vkbench.site.changes_page`), ``coverage.html`` (probe/policy x CPU op x
   partitioner reason, per commit; :mod:`vkbench.site.coverage_page`), ``runtime.html``
   (:mod:`vkbench.site.runtime_page`), ``bugs.html``, the bug list (:mod:`vkbench.site.bugs_page`),
   and ``index.html``, the dashboard (:mod:`vkbench.site.dashboard`: plots of the recorded results,
   linking the other pages).
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path
from typing import Any

from vkbench import settings
from vkbench.paths import RESULTS_ROOT
from vkbench.site import coverage_sets, pages
from vkbench.site.assets import ASSETS, VENDOR_DIR, check_vendor
from vkbench.site.load import load_site_data
from vkbench.site.navigation import SITES

_TAG = re.compile(r"<(script|link)\b[^>]*?(?:src|href)=\"(https?://[^\"]+)\"[^>]*>", re.I)


def rewrite_index(index: Path) -> list[str]:
    """Point an asv ``index.html`` at ``vendor/``; return the CDN URLs it replaced."""
    text = index.read_text()
    replaced: list[str] = []

    def local(match: re.Match[str]) -> str:
        tag, url = match.group(1).lower(), match.group(2)
        asset = next((a for a in ASSETS if a.cdn and a.cdn in url), None)
        if asset is None:
            return match.group(0)
        replaced.append(url)
        if tag == "script":
            return f'<script src="vendor/{asset.local}" onerror="js_load_failure()">'
        return f'<link rel="stylesheet" href="vendor/{asset.local}">'

    text = _TAG.sub(local, text)
    index.write_text(text)
    return replaced


def external_resources(index: Path) -> list[str]:
    """Scripts and stylesheets an HTML file still loads from the network."""
    return [m.group(2) for m in _TAG.finditer(index.read_text())
            if m.group(1).lower() == "script" or "stylesheet" in m.group(0)]


def vendor_site(site: Path) -> list[str]:
    """Copy the vendored assets into ``site/vendor`` and point its ``index.html`` at them."""
    problems = check_vendor()
    if problems:
        raise RuntimeError(f"vendored assets are broken ({'; '.join(problems)}); "
                           "run vkbench site vendor")
    target = site / "vendor"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(VENDOR_DIR, target)
    return rewrite_index(site / "index.html")


def cache_coverage(results_root: Path) -> None:
    """Compute the installed ExecuTorch's coverage into ``results_root/coverage`` unless it is there.

    The site still lists what is stored when this fails (no ExecuTorch importable, a probe raising).
    """
    try:
        coverage_sets.collect(results_root / coverage_sets.FOLDER)
    except Exception as error:  # noqa: BLE001 - the page still lists what is cached
        print(f"vkbench.site: coverage not computed ({type(error).__name__}: {error})", file=sys.stderr)


def make_offline(html_root: Path, *, coverage: bool | None = None,
                 coverage_sets: list[dict[str, Any]] | None = None,
                 results_root: Path = RESULTS_ROOT) -> dict[str, Any]:
    """Vendor assets into every asv site under ``html_root``; write every page of :data:`PAGES`.

    ``results_root``: the recorded results every page reads (default: the checkout's ``results/``);
    ``coverage``: compute the installed ExecuTorch's probe coverage when not stored (default: yes
    unless ``$VKBENCH_SITE_COVERAGE=0``); ``coverage_sets`` replaces the stored sets (tests).
    Returns the CDN URLs replaced per site and, per page, its path and what the navigation says it lists.
    """
    html_root, results_root = Path(html_root), Path(results_root)
    html_root.mkdir(parents=True, exist_ok=True)
    compute = coverage if coverage is not None else settings.text("VKBENCH_SITE_COVERAGE") != "0"
    if coverage_sets is None and compute:
        cache_coverage(results_root)
    data = load_site_data(html_root, results_root, coverage_sets=coverage_sets)
    report: dict[str, Any] = {"sites": {site.name: vendor_site(html_root / site.name) for site in data.sites}}
    report["pages"] = {page.file: {"path": str(page.write(html_root, data)),
                                   "shows": page.shows(data) if page.shows else ""} for page in pages.PAGES}
    return report


__all__ = ["SITES", "external_resources", "make_offline", "rewrite_index"]
