"""The published site works offline: vendored assets, landing page, coverage page.

A tiny asv project (two commits, a stand-in ``bench_partition.PartitionScaling.time_partition``
that returns at once) is run with ``-E existing`` and published; then
:func:`vkbench.site.make_offline` rewrites it. Headless Chromium (Debian's
``chromium``; skipped when absent) loads it from 127.0.0.1 with every other
host unresolvable, and the DOM (``--dump-dom`` after a virtual-time budget)
must show the time_partition graph with plotted points: a probe script added
to a copy of ``index.html`` reads Flot's own plot object.
"""

from __future__ import annotations

import dataclasses
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from vkbench.site import external_resources, make_offline
from vkbench.site.assets import ASSETS, check_vendor
from vkbench.site.coverage_page import render_page

pytest.importorskip("asv")

GRAPH = "bench_partition.PartitionScaling.time_partition"
BENCH = '''
import time


class PartitionScaling:
    params = [[50, 100]]
    param_names = ["blocks"]

    def time_partition(self, blocks):
        time.sleep(blocks * 1e-5)
'''
PROBE = """
<script>
(function poll() {
  var plot = window.jQuery && jQuery('#main-graph').data('plot');
  if (plot) {
    var points = 0;
    plot.getData().forEach(function (s) {
      s.data.forEach(function (d) { if (d && d[1] !== null && !isNaN(d[1])) points++; });
    });
    document.body.setAttribute('data-vkbench-points', String(points));
    document.body.setAttribute('data-vkbench-series', String(plot.getData().length));
  }
  if (!plot || !points) setTimeout(poll, 100);
})();
</script>
"""
COVERAGE_SET = {
    "executorch": {"version": "1.5.1+cpu", "git_version": "3b60683923245cf472b7323426920e15623ba361"},
    "computed": "2026-01-01T00:00:00Z", "seconds": 1.0,
    "rows": [
        {"kind": "probe", "name": "elu", "op": "aten.elu.default", "reason": "no kernel", "nodes": 1},
        {"kind": "probe", "name": "linear_f32", "op": "", "reason": "all delegated", "nodes": 0},
        {"kind": "policy", "name": "gamma/model", "op": "", "nodes": 0,
         "reason": "BLOCKED at export: GuardOnDataDependentSymNode Could not guard"},
    ],
}
#: The class :func:`vkbench.site.coverage_page.row_status` gives each row of COVERAGE_SET, in order.
STATUSES = ["partial", "delegated", "blocked"]


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t.invalid"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``html/`` with a published, offline-ready ``releases`` site of two commits."""
    tmp = tmp_path_factory.mktemp("site")
    repo = tmp / "project"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    commits = []
    for i, date in enumerate(("2026-01-01T00:00:00+0000", "2026-01-02T00:00:00+0000")):
        (repo / "RELEASE").write_text(f"{i}\n")
        _git(repo, "add", "RELEASE")
        os.environ["GIT_COMMITTER_DATE"] = os.environ["GIT_AUTHOR_DATE"] = date
        try:
            _git(repo, "commit", "-q", "-m", f"release {i}")
        finally:
            os.environ.pop("GIT_COMMITTER_DATE")
            os.environ.pop("GIT_AUTHOR_DATE")
        commits.append(_git(repo, "rev-parse", "HEAD"))
    bench = tmp / "benchmarks"
    bench.mkdir()
    (bench / "__init__.py").write_text("")
    (bench / "bench_partition.py").write_text(BENCH)
    config = tmp / "asv.conf.json"
    config.write_text(json.dumps({
        "version": 1, "project": "executorch", "repo": str(repo), "branches": ["main"],
        "environment_type": "existing", "benchmark_dir": str(bench), "env_dir": str(tmp / "env"),
        "results_dir": str(tmp / "results"), "html_dir": str(tmp / "html" / "releases"),
    }))

    # HOME in tmp: `asv machine` writes ~/.asv-machine.json, which is the user's, not the test's.
    env = {**os.environ, "HOME": str(tmp / "home")}

    def asv(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "asv", args[0], "--config", str(config), *args[1:]],
                       check=True, capture_output=True, text=True, timeout=300, env=env)

    asv("machine", "--yes", "--machine", "site-test")
    for commit in commits:
        asv("run", "-E", f"existing:{sys.executable}", "--set-commit-hash", commit, "--machine",
            "site-test", "--quick")
    asv("publish")
    make_offline(tmp / "html", coverage_sets=[COVERAGE_SET])
    return tmp / "html"


def test_vendored_assets_match_their_manifest() -> None:
    assert check_vendor() == []
    root = Path(__file__).resolve().parents[1]
    manifest = json.loads((root / "vkbench/site/vendor/manifest.json").read_text())
    assert {(a["package"], a["version"]) for a in manifest["assets"]} >= {
        ("jquery", "3.3.1"), ("flot", "0.8.3"), ("bootstrap", "3.1.1"), ("blueimp-md5", "2.19.0"),
        ("flot-orderbars", "1.0.0"), ("stupid-table-plugin", "1.1.3")}
    assert len(manifest["assets"]) == len(ASSETS)


def test_index_loads_nothing_from_the_network(site: Path) -> None:
    index = site / "releases" / "index.html"
    assert external_resources(index) == []
    for src in re.findall(r'(?:src|href)="(vendor/[^"]+)"', index.read_text()):
        assert (site / "releases" / src).is_file(), src


def test_landing_and_coverage_pages(site: Path) -> None:
    landing = (site / "index.html").read_text()
    assert 'href="releases/index.html"' in landing and 'href="coverage.html"' in landing
    assert "upstream/index.html" not in landing  # only sites that exist
    page = (site / "coverage.html").read_text()
    assert "aten.elu.default" in page and "no kernel" in page


def test_coverage_rows_from_a_real_lowering() -> None:
    from vkbench.site.coverage_sets import probe_rows

    rows = probe_rows(["elu"])
    assert [(r["name"], r["op"]) for r in rows] == [("elu", "aten.elu.default")]
    assert rows[0]["nodes"] == 1 and rows[0]["reason"]
    assert "</script>" not in render_page([{"executorch": {}, "rows": [{"reason": "</script>"}]}]).split(
        'type="application/json">')[1].split("</script>")[0]


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def dump_dom(url: str, tmp: Path, budget_ms: int = 15000) -> str:
    browser = chromium()
    if browser is None:
        pytest.skip("chromium not installed (apt-get install -y chromium chromium-driver)")
    profile = tmp / "profile"
    profile.mkdir(exist_ok=True)
    command = [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", f"--user-data-dir={profile}",
        # only 127.0.0.1 resolves: a CDN reference would fail, not silently load
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        f"--virtual-time-budget={budget_ms}", "--dump-dom", url,
    ]
    # Chromium writes crash-report settings under $XDG_CONFIG_HOME even with --user-data-dir: keep it in tmp.
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp / "config")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_time_partition_graph_has_points_offline(site: Path, server: str, tmp_path: Path) -> None:
    index = site / "releases" / "index.html"
    probe = index.with_name("probe.html")
    probe.write_text(index.read_text().replace("</body>", PROBE + "</body>"))
    dom = dump_dom(f"{server}/releases/probe.html#{GRAPH}", tmp_path)
    assert 'id="main-graph"' in dom  # still on index (a failed script load navigates to error.html)
    points = re.search(r'data-vkbench-points="(\d+)"', dom)
    assert points, dom[-3000:]
    assert int(points.group(1)) >= 2  # two commits (per plotted series)
    assert re.search(r'data-vkbench-series="[1-9]', dom)


def test_coverage_page_renders_offline(site: Path, server: str, tmp_path: Path) -> None:
    dom = dump_dom(f"{server}/coverage.html", tmp_path, budget_ms=3000)
    assert re.search(r'data-rows="3"', dom), dom[-2000:]
    assert "aten.elu.default" in dom
    # blocked is not delegated: each status has its own row class (and style), in the rendered DOM
    assert re.findall(r'<tr class="(\w+)">', dom) == STATUSES
    assert re.search(r'<tr class="blocked"><td>[^<]*</td><td>policy</td><td>gamma/model</td>', dom)


def test_coverage_statuses_and_their_styles() -> None:
    from vkbench.site.coverage_page import row_status

    assert [row_status(row) for row in COVERAGE_SET["rows"]] == STATUSES
    assert row_status({"op": "", "reason": "FAILED: lowering raised"}) == "blocked"
    page = render_page([COVERAGE_SET])
    payload = json.loads(page.split('type="application/json">')[1].split("</script>")[0])
    assert [row["status"] for row in payload[0]["rows"]] == STATUSES
    styles = {status: re.search(rf"tr\.{status} td(?::first-child)?\{{([^}}]+)\}}", page).group(1)
              for status in STATUSES}
    assert len(set(styles.values())) == 3, styles  # three different looks
    assert "#1e7a4c" in styles["delegated"] and "#9b2226" in styles["blocked"]  # green; blocked red


def _upstream_tree(results: Path, commits: list[str]) -> None:
    from vkbench.suite import catalogue

    folder = results / "upstream" / "testbox"
    folder.mkdir(parents=True)
    (folder / "machine.json").write_text(json.dumps({"machine": "testbox", "version": 1}))
    for i, commit in enumerate(commits):
        (folder / f"{commit[:8]}-virtualenv-py3.12.json").write_text(json.dumps({
            "commit_hash": commit, "env_name": "virtualenv-py3.12",
            "date": 1_700_000_000_000 + i * 86_400_000, "result_columns": ["result", "params", "version"],
            "version": 2,  # the row's version below: one suite digest, so neighbours are compared
            "results": {catalogue.PROBE_CPU_OPS.name: [[1 if i < 3 else 0], [["'elu'"]],
                                                       "suite-0123456789abcdef"]}}))


def test_upstream_release_tags_label_their_commits_without_overlap(tmp_path: Path) -> None:
    """Release names come from the tag stored beside each result file (its sidecar's provenance,
    written by ``vkbench upstream`` from the mirror); the x labels of the history charts keep every
    release and the last commit, and no two of them overlap."""
    from vkbench.results import sidecar
    from vkbench.results.model import Provenance
    from vkbench.site.dashboard import plots
    from vkbench.site.dashboard.views import load_upstream
    from vkbench.site.load import load_site_data

    commits = [f"{i:02d}" + "c0ffee" * 6 + "00" for i in range(19)]
    _upstream_tree(tmp_path / "results", commits)
    folder = tmp_path / "results" / "upstream" / "testbox"
    for i, tag in ((0, "v1.3.0"), (1, "v1.3.1"), (10, "v1.4.0"), (15, "v1.4.1")):
        sidecar.merge(folder / f"{commits[i][:8]}-virtualenv-py3.12.json", Provenance(release=tag))
    upstream = load_upstream(load_site_data(tmp_path / "html", tmp_path / "results"))
    assert [c for c, _ in upstream.commits] == commits
    svg = plots.plot_commit_series(upstream.series[0], upstream.commits, upstream.releases, "t")
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    for i, version in ((0, "1.3.0"), (1, "1.3.1"), (10, "1.4.0"), (15, "1.4.1")):
        assert f"v{version} {commits[i][:8]}" in labels, labels  # the tag under its commit
    assert commits[18][:8] in labels and commits[3][:8] in labels  # the last commit; where elu changes

    def overlaps(count: int, releases: dict[str, str]) -> tuple[list[int], int]:
        fig = plots.new_figure(3.3, 2.35)
        ax = fig.subplots()
        ax.set_xlim(-0.5, count - 0.5)
        ax.tick_params(axis="x", labelsize=6.5, labelrotation=90)
        history = [(f"{i:08d}", i) for i in range(count)]
        names = {i: plots._tick_label(c, releases) for i, (c, _) in enumerate(history)}
        shown = plots.fit_ticks(fig, ax, plots.history_ticks(history, releases), names)
        fig.draw_without_rendering()
        boxes = [text.get_window_extent() for text in ax.get_xticklabels()]
        return shown, sum(a.overlaps(b) for k, a in enumerate(boxes) for b in boxes[k + 1:])

    shown, collisions = overlaps(19, {f"{i:08d}": f"1.{i}.0" for i in (0, 1, 10, 15)})
    assert collisions == 0 and {0, 1, 10, 15, 18} <= set(shown)
    shown, collisions = overlaps(150, {f"{i:08d}": f"1.{i}.0" for i in range(0, 150, 2)})  # too dense
    assert collisions == 0 and 0 < len(shown) < 75


def test_scaling_note_explains_the_phase_bars_with_the_data() -> None:
    from vkbench.site.dashboard.dashboard_page import scaling_section
    from vkbench.site.dashboard.views import Scaling

    scale = Scaling("box", "c" * 40, "ExecuTorch 9.9", {50: 1.6, 400: 44.57},
                    {"propose_partitions": {50: 0.1, 400: 47.28}, "fusable_patterns": {50: 1.96, 400: 1.93},
                     "is_node_supported": {50: 0.02, 400: 0.34}}, {}, [50, 400], {50: 5, 400: 1})
    body = scaling_section([scale]).body
    assert 'data-blocks="400" data-line="44.57" data-bars="49.55"' in body
    assert "<b>49.55 s</b>" in body and "<b>44.57 s</b>" in body and "(+11%)" in body
    assert "the median of 1 sample at 400 blocks" in body and "time.perf_counter" in body
    assert "50 blocks 2.08 s against 1.60 s" in body


def test_a_publish_reads_the_results_once_and_every_page_writes_from_that_data(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``make_offline`` reads the results root once into one :class:`SiteData`, computes the changes
    table (as events) once, and hands that one object to every page: with the results root moved
    away as soon as it is read, every page comes out byte for byte as it does when it stays."""
    import vkbench.results.changes as changes_module
    import vkbench.results.events as events_module
    import vkbench.site as site
    from vkbench.site import load, pages

    results = tmp_path / "results"
    _upstream_tree(results, [f"{i:02d}" + "c0ffee" * 6 + "00" for i in range(4)])
    (results / "coverage").mkdir()
    (results / "coverage" / "1.5.1.json").write_text(json.dumps(COVERAGE_SET))  # under results_root
    before = make_offline(tmp_path / "before", coverage=False, results_root=results)

    calls: Counter[str] = Counter()
    handed: list[tuple[str, object]] = []

    def counted(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return function(*args, **kwargs)
        return call

    def recorded(page: str, render: Callable[[Any], str]) -> Callable[[Any], str]:
        def call(data: Any) -> str:
            handed.append((page, data))
            return render(data)
        return call

    monkeypatch.setattr(changes_module, "changes", counted("changes", changes_module.changes))
    monkeypatch.setattr(events_module, "changes", counted("changes", events_module.changes))
    monkeypatch.setattr(load, "read_recorded", counted("read_recorded", load.read_recorded))
    real_load = site.load_site_data

    def load_then_move(html_root: Path, results_root: Path, **kwargs: Any) -> object:
        data = real_load(html_root, results_root, **kwargs)
        results_root.rename(tmp_path / "moved")  # the pages may not read it again
        return data

    monkeypatch.setattr(site, "load_site_data", load_then_move)
    listed = pages.PAGES
    watched = tuple(dataclasses.replace(page, render=recorded(page.file, page.render)) for page in listed)
    monkeypatch.setattr(pages, "PAGES", watched)
    after = make_offline(tmp_path / "after", coverage=False, results_root=results)

    assert calls == {"read_recorded": 1, "changes": 1}
    assert [name for name, _ in handed] == [page.file for page in listed]
    assert len({id(data) for _, data in handed}) == 1 and handed[0][1].results_root == results
    shown = {file: page["shows"] for file, page in before["pages"].items()}
    assert shown == {file: page["shows"] for file, page in after["pages"].items()}
    assert shown["coverage.html"] == "1 commit" and shown["changes.html"].endswith("1 step")  # elu 1 -> 0
    for name in ("index", "changes", "bugs", "coverage", "runtime"):
        assert (tmp_path / "after" / f"{name}.html").read_bytes() == (
            tmp_path / "before" / f"{name}.html").read_bytes(), name


def test_a_new_page_is_one_page_object_and_one_line_in_the_list(tmp_path: Path, monkeypatch) -> None:
    """What README's recipe says: a ``Page`` and its entry in ``PAGES``; ``make_offline`` writes it, the
    navigation every page shows links it with its count, and nothing else changes."""
    from vkbench.site import pages
    from vkbench.site.page import Page

    results = tmp_path / "results"
    _upstream_tree(results, [f"{i:02d}" + "c0ffee" * 6 + "00" for i in range(4)])
    def releases(data: Any) -> list[str]:
        return sorted(set(data.release_names.values()))

    new = Page("releases-list.html", "Releases", "every release the ledger recorded",
               lambda data: f"<html><body>{', '.join(releases(data))}</body></html>",
               lambda data: f"{len(releases(data))} releases")
    monkeypatch.setattr(pages, "PAGES", (*pages.PAGES, new))
    report = make_offline(tmp_path / "html", coverage=False, results_root=results)
    assert (tmp_path / "html" / "releases-list.html").is_file()
    assert report["pages"]["releases-list.html"]["shows"].endswith("releases")
    index = (tmp_path / "html" / "index.html").read_text()
    assert 'href="releases-list.html"' in index and "every release the ledger recorded" in index
