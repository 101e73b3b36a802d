"""The published site, made to work offline: vendored assets, landing page, coverage page.

:func:`make_offline` is called after every ``asv publish`` (``vkbench
publish``/``record`` call it for ``html/releases``; the workflow and the
docs call ``vkbench site make-offline html`` for ``html/upstream``):

1. copies ``vkbench/site/vendor`` (npm-pinned jQuery, Flot, Bootstrap, ... see
   :mod:`vkbench.site.assets`) into each asv site under ``<site>/vendor/`` and
   rewrites that site's ``index.html`` to load them instead of CDN URLs;
2. writes ``html_root/coverage.html`` (probe/policy x CPU op x partitioner
   reason, per commit; data embedded as JSON, see :mod:`vkbench.site.coverage`);
3. writes ``html_root/runtime.html`` (:mod:`vkbench.site.runtime_page`) and
   ``html_root/bugs.html``, the bug list (:mod:`vkbench.site.bugs_page`);
4. writes ``html_root/index.html``, the dashboard (:mod:`vkbench.site.dashboard`:
   plots of the committed results, linking the asv sites, coverage and runtime pages).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from vkbench import settings
from vkbench.site.assets import ASSETS, VENDOR_DIR, check_vendor

#: asv sites that may live under the html root.
SITES = ("releases", "upstream")
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
    problems = check_vendor()
    if problems:
        raise RuntimeError(f"vendored assets are broken ({'; '.join(problems)}); "
                           "run vkbench site vendor")
    target = site / "vendor"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(VENDOR_DIR, target)
    return rewrite_index(site / "index.html")


def _site_summary(site: Path) -> dict[str, Any]:
    info: dict[str, Any] = {"name": site.name, "benchmarks": 0, "commits": 0}
    try:
        index = json.loads((site / "index.json").read_text())
        info["benchmarks"] = len(index.get("benchmarks", {}))
        info["commits"] = len(index.get("revision_to_hash", {}))
        info["project"] = index.get("project", "")
    except (OSError, json.JSONDecodeError):
        pass
    return info


_ABOUT = {
    "releases": "installed-release ledger: one commit per recorded ExecuTorch release (vkbench record)",
    "upstream": "upstream commit ranges measured by asv run (aot/full build modes)",
}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def make_offline(html_root: Path, *, coverage: bool | None = None, coverage_sets: list | None = None,
                 results_root: Path | None = None) -> dict:
    """Vendor assets into every asv site under ``html_root``; write the coverage, runtime and dashboard pages.

    ``coverage``: compute the installed ExecuTorch's probe coverage when not
    cached (default: yes unless ``$VKBENCH_SITE_COVERAGE=0``); ``coverage_sets``
    replaces the cached sets (tests); ``results_root``: where the dashboard reads
    the committed results (default: the checkout's ``results/``).
    """
    from vkbench.site.dashboard import RESULTS_ROOT, Link, write_dashboard

    html_root = Path(html_root)
    html_root.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"sites": {}, "coverage_sets": 0}
    links = []
    for name in SITES:
        site = html_root / name
        if not (site / "index.html").exists():
            continue
        report["sites"][name] = vendor_site(site)
        info = _site_summary(site)
        counts = f'{info["benchmarks"]} benchmarks, {info["commits"]} commits'
        links.append(Link(f"{name}/index.html", name, f'{_ABOUT.get(name, "")} ({counts})'))
    if coverage_sets is None:
        from vkbench.site import coverage as cov

        if coverage if coverage is not None else settings.text("VKBENCH_SITE_COVERAGE") != "0":
            try:
                cov.collect()
            except Exception as error:  # noqa: BLE001 - the page still lists what is cached
                print(f"vkbench.site: coverage not computed ({type(error).__name__}: {error})",
                      file=sys.stderr)
        coverage_sets = cov.stored()
    from vkbench.site.coverage import render_page

    (html_root / "coverage.html").write_text(render_page(coverage_sets))
    report["coverage_sets"] = len(coverage_sets)
    from vkbench.site import runtime_page

    report["runtime_rows"] = runtime_page.write(html_root)
    from vkbench.site import changes_page

    report["changes"] = changes_page.write_from_results(html_root, results_root or RESULTS_ROOT)
    links.append(Link("changes.html", "Changes", "every step of a recorded count, on the commit that "
                      f"caused it ({_count(report['changes'], 'step')})"))
    links += [
        Link("coverage.html", "Coverage", "probe/policy × CPU op × partitioner reason, per commit "
             f"({_count(len(coverage_sets), 'commit')})"),
        Link("runtime.html", "Vulkan runtime", "Many(n) step limits, execute time, µs per dispatch "
             f"({_count(report['runtime_rows'], 'result set')})"),
    ]
    from vkbench.site import bugs_page

    report["bugs"] = bugs_page.write(html_root, results_root or RESULTS_ROOT)
    links.append(Link("bugs.html", "Bug list", "each distinct failure: owner, blocked entries, probe, "
                      f"reproducer ({_count(report['bugs'], 'row')})"))
    report["dashboard"] = str(write_dashboard(html_root, results_root or RESULTS_ROOT, links=links))
    return report


__all__ = ["SITES", "external_resources", "make_offline", "rewrite_index"]
