"""The dashboard (``html/index.html``) renders offline in a real browser, with a plot per section.

Two pages are built with ``vkbench.site.dashboard.PAGE.write`` from the site's data
(:func:`vkbench.site.load.load_site_data`): one from the committed ``results/`` and one
from a small synthetic results tree
(a policy survey, a partition scaling record on an exact power law, step
limits with the tracer on and off, and two upstream commits so the step
charts appear). Each is served from 127.0.0.1 and loaded by headless
Chromium (Debian's ``chromium``; skipped when absent) with every other host
unresolvable; the test takes a screenshot and asserts on the DOM Chromium
dumps: every section, an ``<svg>`` per plot, the fitted exponent, the policy
names, and no resource fetched from anywhere but the page itself.
"""

from __future__ import annotations

import functools
import html.parser
import http.server
import json
import math
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from vkbench.paths import RESULTS_ROOT
from vkbench.results.asv_files import read_dir
from vkbench.site import dashboard, external_resources
from vkbench.site.dashboard.views import load_scaling, load_survey, load_torch_stack, load_upstream
from vkbench.site.data import SiteData
from vkbench.site.load import load_site_data
from vkbench.suite import catalogue

pytest.importorskip("matplotlib")

SECTIONS = ("share", "blockers", "scaling", "upstream", "step-limits", "ladder")
#: Attributes and CSS through which a page would fetch something.
_FETCH = re.compile(r"""\b(?:src|srcset|href|xlink:href|poster|action|data)\s*=\s*["']?\s*(?:https?:)?//"""
                    r"""|url\(\s*["']?\s*(?:https?:)?//|@import""", re.I)
COMMIT_A, COMMIT_B = "a" * 40, "b" * 40


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("chromium not installed (apt-get install -y chromium)")


def browse(url: str, tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    """Headless Chromium with the network cut off: only 127.0.0.1 resolves."""
    profile = tmp / "profile"
    profile.mkdir(exist_ok=True)
    command = [
        chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", "--hide-scrollbars", f"--user-data-dir={profile}",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", *extra, url,
    ]
    # Chromium writes crash-report settings under $XDG_CONFIG_HOME even with --user-data-dir: keep it in tmp.
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp / "config")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


class Dom(html.parser.HTMLParser):
    """The parts of the dumped DOM the assertions need."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.plots: list[str] = []
        self.svgs = 0
        self.plot_svgs = 0
        self.exponents: list[str] = []
        self.headlines: list[str] = []
        self._open: list[tuple[str, str]] = []  # (tag, marker class) of the open elements
        self._in_plot = 0
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        classes = (attr.get("class") or "").split()
        if tag == "section":
            self.sections.append(attr.get("id") or "")
        if tag == "figure" and "plot" in classes:
            self.plots.append(attr.get("data-plot") or "")
            self._in_plot += 1
        if tag == "svg":
            self.svgs += 1
            self.plot_svgs += bool(self._in_plot)
        marker = next((c for c in ("exponent", "headline") if c in classes), "")
        if tag not in ("meta", "br", "hr", "img", "link", "input"):
            self._open.append((tag, marker))

    def handle_endtag(self, tag: str) -> None:
        if tag == "figure" and self._in_plot:
            self._in_plot -= 1
        if any(open_tag == tag for open_tag, _ in self._open):
            while self._open.pop()[0] != tag:
                pass

    def handle_data(self, data: str) -> None:
        marker = self._open[-1][1] if self._open else ""
        if marker == "exponent":
            self.exponents.append(data)
        elif marker == "headline":
            self.headlines.append(data)


def write_dashboard(html_root: Path, results_root: Path) -> Path:
    """The dashboard of ``results_root``, from the site's data as a publish reads it."""
    return dashboard.PAGE.write(html_root, load_site_data(html_root, results_root))


@pytest.fixture(scope="module")
def committed(tmp_path_factory: pytest.TempPathFactory) -> SiteData:
    """The site's data of the checkout's results."""
    return load_site_data(tmp_path_factory.mktemp("committed-html"), RESULTS_ROOT)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory, committed: SiteData) -> Path:
    """``committed/index.html`` (the checkout's results) and ``synthetic/index.html`` under one root."""
    root = tmp_path_factory.mktemp("dashboard")
    dashboard.PAGE.write(root / "committed", committed)
    results = synthetic_results(root / "results")
    write_dashboard(root / "synthetic", results)
    return root


@pytest.fixture(scope="module")
def server(pages: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(pages)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def _asv(path: Path, commit: str, date_ms: int, results: dict[str, list]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.parent / "machine.json").write_text(json.dumps({"machine": path.parent.name, "version": 1}))
    versioned = {name: [*row, "suite-0123456789abcdef"] for name, row in results.items()}  # one suite
    path.write_text(json.dumps({"commit_hash": commit, "env_name": "existing-py3.12", "date": date_ms,
                                "result_columns": ["result", "params", "version"], "results": versioned,
                                "version": 2}))


def synthetic_results(results: Path) -> Path:
    """Small results tree: 3 policy entries, partition time = 2 s x (n/50)^1.5, limits, 2 upstream commits."""
    cpu_nodes = [{"node": f"elu_{i}", "op": "aten.elu.default", "reasons": ["no operator implementation"]}
                 for i in range(6)] + [{"node": "cat", "op": "aten.cat.default",
                                        "reasons": ["input[0] dtype torch.float64 not in {torch.float32}"]}]
    rows = [
        {"entry": "alpha/model", "policy": "alpha", "status": "lowered", "stage": "",
         "coverage": {"nodes_total": 100, "nodes_delegated": 93, "nodes_cpu": 7,
                      "cpu_ops": {"aten.elu.default": 6, "aten.cat.default": 1}, "cpu_nodes": cpu_nodes}},
        {"entry": "beta/step", "policy": "beta", "status": "lowered", "stage": "",
         "coverage": {"nodes_total": 40, "nodes_delegated": 40, "nodes_cpu": 0, "cpu_ops": {},
                      "cpu_nodes": []}},
        {"entry": "gamma/model", "policy": "gamma", "status": "blocked", "stage": "export",
         "error_type": "GuardOnDataDependentSymNode", "error": "Could not guard on data-dependent expression",
         "coverage": None},
    ]
    blockers = {"by_op": [
        {"name": "aten.elu.default", "nodes": 6, "entries": ["alpha/model"], "unblocks": [],
         "reasons": {"no operator implementation": 6}},
        {"name": "aten.cat.default", "nodes": 1, "entries": ["alpha/model"], "unblocks": [],
         "reasons": {"input[0] dtype torch.float64 not in {torch.float32}": 1}}], "by_reason": []}
    (results / "policies").mkdir(parents=True)
    (results / "policies" / "executorch-9.9.9-testbox.json").write_text(
        json.dumps({"rows": rows, "blockers": blockers}))
    (results / "ledger.json").write_text(json.dumps({"releases": [
        {"version": "9.9.9+cpu", "git_version": COMMIT_B, "date": "2024-03-09T00:00:00Z",
         "commit": "c" * 40}]}))  # as the ledger's one reader (results/ledger_file.py) reads it
    sizes = ["50", "100", "200", "400"]
    seconds = [2.0 * (int(n) / 50) ** 1.5 for n in sizes[:3]] + [math.nan]
    phases = []
    for n in sizes:
        phases += [math.nan] * 2 if n == "400" else [0.5 * (int(n) / 50) ** 2, 0.25]
    _asv(results / "releases" / "testbox" / "cccccccc-existing-py3.12.json", "c" * 40, 1_700_000_000_000, {
        "bench_partition.PartitionScaling.time_partition": [seconds, [sizes]],
        "bench_partition.PartitionScalingPhases.track_phase_seconds": [
            phases, [sizes, ["'propose_partitions'", "'fusable_patterns'"]]],
        "bench_partition.PartitionScalingRecord.track_partitions": [[51, 101, 201, math.nan], [sizes]],
    })
    RUNNERS = ["'python'", "'native'"]  # noqa: N806 - asv's quoted parameter values
    for tracer, short in (("on", 3000), ("off", 0)):
        _asv(results / "releases" / f"gpu-tracer-{tracer}" / "cccccccc-existing-py3.12.json", "c" * 40,
             1_700_000_000_000,
             {"bench_runtime.StepLimit.track_steps_short_of_cap": [[None, short], [RUNNERS]],
              # (entry, runner): alpha matches natively, beta stops at load, gamma never lowered
              "bench_policy_runtime.PolicyLadder.track_rungs_short": [
                  [None, 0, None, 3, None, 4], [["'alpha/model'", "'beta/step'", "'gamma/model'"], RUNNERS]]})
    probes, entries = ["'elu'", "'linear_f32'"], ["'alpha/model'", "'gamma/model'"]
    for commit, date, elu, alpha in ((COMMIT_A, 1_700_000_000_000, 1, 7),
                                     (COMMIT_B, 1_710_000_000_000, 0, 6)):
        _asv(results / "upstream" / "testbox" / f"{commit[:8]}-virtualenv-py3.12.json", commit, date, {
            catalogue.PROBE_CPU_OPS.name: [[elu, 0], [probes]],
            catalogue.PROBE_PROGRAMS.name: [[1 - elu, 1], [probes]],
            catalogue.POLICY_CPU_OPS.name: [[alpha, math.nan], [entries]],
        })
    return results


def no_fetches(page: str) -> list[str]:
    """Anything in the page that would make the browser fetch a resource (there must be nothing)."""
    return _FETCH.findall(page) + [m for m in re.findall(r"<(?:script|link|img|iframe)\b[^>]*>", page, re.I)]


def check_offline_page(dom_text: str, source: Path) -> Dom:
    dom = Dom(dom_text)
    assert dom.sections == list(SECTIONS), dom.sections
    assert dom.plots and dom.plot_svgs == len(dom.plots), (dom.plots, dom.plot_svgs)
    assert no_fetches(dom_text) == [] and no_fetches(source.read_text()) == []
    assert external_resources(source) == []
    ids = re.findall(r'\sid="([^"]+)"', dom_text)
    assert len(ids) == len(set(ids)), "inline SVGs share ids (clip paths would cross plots)"
    assert 'href="coverage.html"' in dom_text and 'href="runtime.html"' in dom_text
    return dom


def screenshot(url: str, tmp: Path, name: str) -> Path:
    png = tmp / f"{name}.png"
    browse(url, tmp, "--window-size=1280,4800", f"--screenshot={png}")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 100_000, png.stat().st_size  # a rendered page, not a blank canvas
    return png


def test_dashboard_of_the_committed_results(pages: Path, server: str, tmp_path: Path,
                                            committed: SiteData) -> None:
    dom_text = browse(f"{server}/committed/index.html", tmp_path, "--dump-dom").stdout
    dom = check_offline_page(dom_text, pages / "committed" / "index.html")
    survey = load_survey(committed)
    if survey is not None:
        assert {"share", "blockers"} <= set(dom.plots)
        for entry in survey.entries:
            assert entry.entry in dom_text and entry.policy in dom_text
        assert re.search(r"Vulkan takes \d+\.\d% of the [\d,]+ nodes", " ".join(dom.headlines))
    scaling = load_scaling(committed)
    if scaling and scaling[0].exponent is not None:
        assert "scaling" in dom.plots
        assert f"k = {scaling[0].exponent:.2f}" in dom.exponents
    upstream = load_upstream(committed)
    charts = [p for p in dom.plots if p.startswith("upstream-")]
    assert len(charts) == len(upstream.series)
    if not upstream.commits:
        assert dom.headlines[SECTIONS.index("upstream")].startswith("No upstream commits recorded yet")
    stack = load_torch_stack(committed)
    recorded = committed.recorded
    assert sum(stack.used.values()) == len(recorded.releases.files) + len(recorded.upstream.files)
    assert "Result files by the torch they were lowered with: " + ", ".join(
        f"{torch} {n}" for torch, n in stack.used.items()) in dom_text
    if stack.pinned:  # the torch each recorded commit pins (its torch_pin.py), beside the one used
        assert "the recorded ExecuTorch commits pin torch " + ", ".join(
            f"{torch} ({n})" for torch, n in stack.pinned.items()) in dom_text
    shot = screenshot(f"{server}/committed/index.html", tmp_path, "committed")
    print(f"screenshot: {shot}")


def test_every_chart_the_committed_results_feed_has_a_point(pages: Path, server: str, tmp_path: Path,
                                                            committed: SiteData) -> None:
    """A benchmark the committed results hold draws its chart: a renamed reader name cannot hide one.

    The expected charts come from the results model, not from the dashboard's loaders: every
    workload that a per-commit coverage track holds (probes, fast policies, VLA entries) has its
    history chart, with a value or a failure mark on at least one commit.
    """
    dom_text = browse(f"{server}/committed/index.html", tmp_path, "--dump-dom").stdout
    dom = check_offline_page(dom_text, pages / "committed" / "index.html")
    found = read_dir(RESULTS_ROOT / "upstream")
    expected: dict[str, set[str]] = {}
    for record in found.files:
        for kind, bench in (("probe", catalogue.PROBE_CPU_OPS), ("policy", catalogue.POLICY_CPU_OPS),
                            ("policy", catalogue.VLA_CPU_OPS)):
            for point in record.points(bench.name):
                expected.setdefault(bench.name, set()).add(f"upstream-{kind}-{point.params[0]}")
    assert set(expected) == {catalogue.PROBE_CPU_OPS.name, catalogue.POLICY_CPU_OPS.name,
                             catalogue.VLA_CPU_OPS.name}, "the committed history lost a coverage track"
    charts = {p for p in dom.plots if p.startswith("upstream-")}
    for bench, wanted in expected.items():
        assert wanted <= charts, (bench, sorted(wanted - charts)[:5])
        assert bench in dom_text, f"{bench} feeds charts but the page does not cite it"
    upstream = load_upstream(committed)
    for series in upstream.series:
        values = [v for line in series.cpu_ops.values() for v in line if v is not None]
        assert values or series.failures, f"{series.kind} {series.name}: a chart without a point"
        # a failure without a stored reason is one an older suite recorded, and the chart says so
        for line, marks in series.failures.items():
            unexplained = [i for i, reason in marks.items() if "no reason" in reason]
            assert set(unexplained) <= series.older.get(line, set()), (series.name, unexplained)
            assert all("older vkbench suite" in marks[i] for i in unexplained), series.name
    if load_scaling(committed):
        assert "scaling" in dom.plots


def test_dashboard_of_synthetic_results(pages: Path, server: str, tmp_path: Path) -> None:
    from vkbench.site.runtime_rows import default_cap

    dom_text = browse(f"{server}/synthetic/index.html", tmp_path, "--dump-dom").stdout
    dom = check_offline_page(dom_text, pages / "synthetic" / "index.html")
    assert dom.plots == ["share", "blockers", "scaling", "upstream-probe-elu", "upstream-probe-linear_f32",
                         "upstream-policy-alpha/model", "upstream-policy-gamma/model",  # gamma: failed twice
                         "step-limits", "ladder"]
    assert dom.svgs == len(dom.plots)
    assert dom.exponents == ["k = 1.50"]  # 2 s x (n/50)^1.5, the 400-block NaN left out
    headlines = dict(zip(SECTIONS, dom.headlines, strict=True))
    assert headlines["share"].startswith("Vulkan takes 95.0% of the 140 nodes of 2 lowered entries")
    assert "1 of 3 entries is blocked before delegation (1 at export)" in headlines["share"]
    assert headlines["blockers"].startswith("aten.elu.default keeps the most nodes on the CPU (6 in 1 entry)")
    assert "n^1.50" in headlines["scaling"] and "propose_partitions" in headlines["scaling"]
    assert headlines["upstream"].startswith("2 upstream commits recorded")
    # no classes of the range in the synthetic results: steps are ranges between recorded neighbours
    assert f"elu 1 → 0 CPU ops between {COMMIT_A[:8]} and {COMMIT_B[:8]} (v9.9.9)" in headlines["upstream"]
    assert f"alpha/model 7 → 6 CPU ops between {COMMIT_A[:8]}" in headlines["upstream"]
    cap = default_cap()
    assert f"stops at {cap - 3000:,} steps on gpu" in headlines["step-limits"]
    assert f"reaches the {cap:,}-step cap" in headlines["step-limits"]
    assert headlines["ladder"] == ("1 of 3 policy entries match eager PyTorch on Vulkan "
                                   "(gpu-tracer-off (C++ runner))")
    ladder = dom_text[dom_text.index('id="ladder"'):]
    assert "beta/step" in ladder and "lowered" in ladder and "not lowered" in ladder
    for name in ("alpha/model", "beta/step", "gamma/model", "blocked at export",
                 "dtype float64 not supported"):
        assert name in dom_text, name
    screenshot(f"{server}/synthetic/index.html", tmp_path, "synthetic")


def test_empty_results_say_so_in_one_line(tmp_path: Path) -> None:
    page = write_dashboard(tmp_path / "html", tmp_path / "results").read_text()
    dom = Dom(page)
    assert dom.sections == list(SECTIONS) and dom.svgs == 0
    headlines = dict(zip(SECTIONS, dom.headlines, strict=True))
    assert headlines["upstream"].startswith("No upstream commits recorded yet")
    assert headlines["scaling"] == "No partition scaling recorded yet."
