"""``html/index.html``: the dashboard, a page to look at rather than read.

The asv sites answer "how did benchmark X move?"; what a visitor wants first
is the state of the Vulkan backend at a glance. This page shows, from the
committed results only (nothing is measured here), five things, each under a
headline that states the takeaway in numbers:

1. per-policy Vulkan share: delegated nodes, CPU nodes by partitioner reason,
   and the stage that blocks the entries that never reach the partitioner
   (``results/policies/*.json``, written by ``vkbench policies``);
2. the top blockers: CPU ops by nodes left on the CPU, and the entries each
   would fully delegate alone (same file);
3. the partition scaling curve: ``Blocks(n)`` partition time on log-log axes
   with the fitted exponent, and its split by partitioner phase (the asv
   results of ``bench_partition`` under ``results/releases/``);
4. coverage across the recorded upstream commits: one step chart per probe
   and per policy entry (asv results under ``results/upstream/``);
5. ``Many(n)`` step limits per device and event-tracer setting (read by
   :mod:`vkbench.site.runtime_page`).

Reading (``load_*``) is kept apart from drawing (``plot_*``, matplotlib's
SVG backend without pyplot, so no global figure state) and from the HTML
(``render``). Every plot is an inline ``<svg>`` and the CSS is inline: the
page loads nothing, from the network or elsewhere.
"""

from __future__ import annotations

import functools
import html
import io
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vkbench.commits.classes import stored
from vkbench.paths import RESULTS_ROOT
from vkbench.results.asv_files import read_dir
from vkbench.results.changes import Change, changes
from vkbench.results.model import ResultSet, finite
from vkbench.suite import catalogue

PARTITION_TIME = catalogue.PARTITION_TIME.name
PARTITION_PHASES = catalogue.PARTITION_PHASES.name
PARTITION_COUNT = catalogue.PARTITION_COUNT.name
#: The history charts: (kind, CPU-op track, Vulkan-program track, lowering-failed track or None).
HISTORY_TRACKS = (
    ("probe", catalogue.PROBE_CPU_OPS, catalogue.PROBE_PROGRAMS, catalogue.PROBE_FAILED),
    ("policy", catalogue.POLICY_CPU_OPS, catalogue.POLICY_PROGRAMS, None),
    ("policy", catalogue.VLA_CPU_OPS, catalogue.VLA_PROGRAMS, None),
)

#: Colours: Vulkan blue for delegated work, warm tones for the CPU reasons.
DELEGATED = "#2f6db5"
REASON_COLOURS = {
    "no operator implementation": "#e07b39",
    "op args not supported": "#e3b23c",
    "dtype float64 not supported": "#b5485d",
    "dtype bool not supported": "#8e6bbf",
    "dtype int32 not supported": "#5fa8a0",
    "op does not support high dim tensors": "#6d8f3a",
}
SPARE_COLOURS = ("#c27c9c", "#7f7f7f", "#a0785a", "#4f8fbf", "#bfa640")
STAGE_COLOURS = {"build": "#9aa5b1", "export": "#c0504d", "to_edge": "#8e6bbf", "partition": "#3d7f7a",
                 "preprocess": "#bfa640", "to_executorch": "#4a5667"}
FAILED = "#c0392b"
TRACER_COLOURS = {"off": "#2f6db5", "on": "#e07b39", "": "#7f7f7f"}


# --------------------------------------------------------------------------- data


@dataclass
class EntryShare:
    """One policy entry: how its graph splits between Vulkan and the CPU, or where it stopped."""

    entry: str
    policy: str
    status: str
    stage: str = ""
    error_type: str = ""
    error: str = ""
    total: int = 0
    delegated: int = 0
    cpu_by_reason: dict[str, int] = field(default_factory=dict)

    @property
    def cpu(self) -> int:
        return sum(self.cpu_by_reason.values())

    @property
    def share(self) -> float:
        return self.delegated / self.total if self.total else 0.0


@dataclass
class Survey:
    """A ``results/policies`` file: which ExecuTorch and machine, entries, blockers."""

    source: str
    version: str
    machine: str
    entries: list[EntryShare]
    blockers: list[dict[str, Any]]


@dataclass
class Scaling:
    """Partition scaling of one machine's newest release commit that recorded it."""

    machine: str
    commit: str
    label: str
    seconds: dict[int, float]
    phases: dict[str, dict[int, float]]
    partitions: dict[int, float]
    sizes: list[int]
    #: asv's ``stats_repeat`` of ``time_partition``: how many samples the median of each size is over.
    samples: dict[int, int] = field(default_factory=dict)

    @property
    def exponent(self) -> float | None:
        return fit_exponent(self.seconds)

    def phase_total(self, n: int) -> float | None:
        """The phase bars' height at ``n``: the record's phases summed (None where none was recorded)."""
        values = [by_size[n] for by_size in self.phases.values() if n in by_size]
        return sum(values) if values else None


@dataclass
class CommitSeries:
    """One step chart: a probe or policy entry, a line per (machine, env), values per commit.

    ``failures``: per line, the commits where the workload was recorded but did
    not lower (its value is a gap), with the stored reason where there is one.
    """

    kind: str
    name: str
    cpu_ops: dict[str, list[float | None]]
    programs: dict[str, list[float | None]] = field(default_factory=dict)
    failures: dict[str, dict[int, str]] = field(default_factory=dict)
    benchmarks: set[str] = field(default_factory=set)


@dataclass
class Upstream:
    """The upstream commits recorded, in date order, and the charts across them."""

    commits: list[tuple[str, int]]
    series: list[CommitSeries]
    releases: dict[str, str]
    #: The steps of the counts (:mod:`vkbench.results.changes`), regressions first.
    changes: list[Change] = field(default_factory=list)


@dataclass
class StepLimit:
    """One device / tracer setting / runner: the largest ``Many(n)`` that executes."""

    device: str
    tracer: str
    runner: str
    limit: int
    cap: int


@dataclass
class Link:
    href: str
    title: str
    about: str


def reason_category(reason: str) -> str:
    """Group the partitioner's dtype messages by dtype; the operand index and allowed set only add noise."""
    match = re.search(r"dtype torch\.(\w+) not in", reason)
    if match:
        return f"dtype {match.group(1)} not supported"
    return reason if len(reason) <= 48 else reason[:47] + "…"


def _entry_share(row: dict[str, Any]) -> EntryShare:
    """CPU nodes split by the first reason the partitioner gave each (so they add up to nodes_cpu)."""
    share = EntryShare(row.get("entry", "?"), row.get("policy", ""), row.get("status", ""),
                       row.get("stage") or "", row.get("error_type") or "", row.get("error") or "")
    coverage = row.get("coverage") or {}
    if share.status != "lowered" or not coverage:
        return share
    share.total, share.delegated = coverage.get("nodes_total", 0), coverage.get("nodes_delegated", 0)
    reasons: Counter[str] = Counter()
    if coverage.get("cpu_nodes"):
        for node in coverage["cpu_nodes"]:
            reasons[reason_category((node.get("reasons") or ["no reason recorded"])[0])] += 1
    else:
        for by_reason in (coverage.get("reasons_by_op") or {}).values():
            for reason, nodes in by_reason.items():
                reasons[reason_category(reason)] += nodes
    share.cpu_by_reason = dict(reasons.most_common())
    return share


def _version_key(path: Path) -> tuple[tuple[int, ...], str]:
    """``executorch-1.10.0-...`` sorts after ``executorch-1.9.1-...`` (numerically, not by name)."""
    match = re.match(r"executorch-([\d.]+)", path.name)
    version = tuple(int(p) for p in match.group(1).strip(".").split(".")) if match else ()
    return version, path.name


def load_survey(results_root: Path) -> Survey | None:
    """The policy survey of the newest ExecuTorch in ``results/policies`` (None if none is committed)."""
    paths = sorted((results_root / "policies").glob("*.json"), key=_version_key)
    if not paths:
        return None
    path = paths[-1]
    data = json.loads(path.read_text())
    match = re.match(r"executorch-(?P<version>[^-]+)-(?P<machine>.+)\.json$", path.name)
    return Survey(path.name, match["version"] if match else "?", match["machine"] if match else "?",
                  [_entry_share(row) for row in data.get("rows", [])],
                  list((data.get("blockers") or {}).get("by_op", [])))


def result_set(folder: Path) -> ResultSet:
    """The asv results under ``folder`` through the one reader; unreadable files are reported once."""
    found = read_dir(folder)
    for problem in found.problems:
        print(f"vkbench.site: skipped {problem}", file=sys.stderr)
    return found


def ledger_versions(results_root: Path) -> dict[str, str]:
    """Ledger commit and upstream ``git_version`` -> ExecuTorch version, to name commits by release."""
    try:
        releases = json.loads((results_root / "ledger.json").read_text()).get("releases", [])
    except (OSError, json.JSONDecodeError):
        return {}
    names = {}
    for release in releases:
        version = str(release.get("version", "")).split("+")[0]
        for key in ("commit", "git_version"):
            if release.get(key):
                names[release[key][:8]] = version
    return names


def fit_exponent(seconds: dict[int, float]) -> float | None:
    """k in seconds ~ n**k by :func:`vkbench.workloads.scaling.loglog_exponent` (as ``vkbench partition``)."""
    from vkbench.workloads.scaling import loglog_exponent

    sizes = sorted(n for n, s in seconds.items() if finite(s) and s > 0)
    return loglog_exponent(sizes, [seconds[n] for n in sizes]) if len(sizes) >= 2 else None


def local_slopes(seconds: dict[int, float]) -> list[tuple[int, int, float]]:
    """The slope of each segment between measured sizes: a single fitted k hides a curve bending up."""
    sizes = sorted(n for n, v in seconds.items() if finite(v) and v > 0)
    return [(a, b, math.log(seconds[b] / seconds[a]) / math.log(b / a)) for a, b in zip(sizes, sizes[1:],
                                                                                       strict=False)]


def _by_blocks(values: dict[tuple[str, ...], Any]) -> dict[int, float]:
    return {int(combo[0]): float(v) for combo, v in values.items() if combo and finite(v)}


def load_scaling(results_root: Path) -> list[Scaling]:
    """Per machine, the newest release commit with at least two timed sizes (400 blocks may be NaN)."""
    versions = ledger_versions(results_root)
    newest: dict[str, Scaling] = {}
    for asv in sorted(result_set(results_root / "releases").files, key=lambda f: f.date):
        times = asv.values(PARTITION_TIME)
        seconds = _by_blocks(times)
        if len(seconds) < 2:
            continue
        phases: dict[str, dict[int, float]] = {}
        for combo, value in asv.values(PARTITION_PHASES).items():
            if len(combo) == 2 and finite(value):
                phases.setdefault(combo[1], {})[int(combo[0])] = float(value)
        sizes = sorted(int(c[0]) for c in times if c)
        version = versions.get(asv.commit[:8])
        label = f"ExecuTorch {version}" if version else f"commit {asv.commit[:8]}"
        held = asv.results[PARTITION_TIME]
        samples = {int(combo[0]): int(count) for combo, count in zip(held.grid(), held.stat("stats_repeat"),
                                                                     strict=False) if combo and finite(count)}
        newest[asv.machine] = Scaling(asv.machine, asv.commit, label, seconds, phases,
                                      _by_blocks(asv.values(PARTITION_COUNT)), sizes, samples)
    return [newest[m] for m in sorted(newest)]


def load_upstream(results_root: Path) -> Upstream:
    """Probe and policy coverage per upstream commit, commits ordered by asv's commit ``date``.

    Commits are named by release from the ledger (an installed release's ``git_version``) and from
    the release tag stored beside each upstream result file (its sidecar's provenance).

    A point whose benchmark was recorded without a value (the workload did
    not lower: asv stores NaN) is a failure, with the reason from the
    file's sidecar where one was stored.
    """
    found = result_set(results_root / "upstream")
    tracks = [b for _, *bench, _ in HISTORY_TRACKS for b in bench] + [
        failed for *_, failed in HISTORY_TRACKS if failed]
    files = found.holding(*(b.name for b in tracks))
    order = ResultSet(found.root, files, [], {}, {}).commits()
    dates = {f.commit: f.date for f in sorted(files, key=lambda f: -f.date)}
    commits = [(c, dates[c]) for c in order]
    index = {commit: i for i, commit in enumerate(order)}
    envs = {f.env_name for f in files}
    charts: dict[tuple[str, str], CommitSeries] = {}
    for f in files:
        line = f.machine if len(envs) == 1 else f"{f.machine} · {f.env_name}"
        for kind, cpu, programs, failed in HISTORY_TRACKS:
            for attr, benchmark in (("cpu_ops", cpu), ("programs", programs)):
                if kind == "policy" and attr == "programs":
                    continue  # the policy charts show CPU ops only (programs: the asv site)
                for point in f.points(benchmark.name):
                    name = point.params[0]
                    chart = charts.setdefault((kind, name), CommitSeries(kind, name, {}))
                    chart.benchmarks.add(benchmark.name)
                    values = getattr(chart, attr).setdefault(line, [None] * len(commits))
                    values[index[f.commit]] = point.value
                    if attr == "cpu_ops" and point.value is None:
                        why = point.failure or f.failure(benchmark.class_name, point.params)
                        reason = f"{why.stage}: {why.error}" if why else "did not lower (no reason stored)"
                        chart.failures.setdefault(line, {})[index[f.commit]] = reason
            if failed is None:
                continue
            for point in f.points(failed.name):  # a failure recorded as a value (ProbeFailure)
                chart = charts.get((kind, point.params[0]))
                if chart is not None and point.value:
                    why = f.failure(failed.name, point.params)  # stored with the failure's value
                    reason = f"{why.stage}: {why.error}" if why else "lowering failed (no reason stored)"
                    chart.failures.setdefault(line, {}).setdefault(index[f.commit], reason)
    series = sorted(charts.values(), key=lambda s: (s.kind != "probe", s.name))
    recorded = [s for s in series if any(v is not None for values in s.cpu_ops.values() for v in values)
                or s.failures]
    tags = {f.commit[:8]: str(f.sidecar.provenance.release).lstrip("v") for f in files
            if f.sidecar.provenance.release}
    steps = changes(found, stored(results_root)).changes
    charted = {cpu.name for _, cpu, _, _ in HISTORY_TRACKS}  # the CPU-op counts the charts draw
    counted = [c for c in steps if (c.benchmark in charted or c.benchmark == catalogue.PROBE_FAILED.name)
               and not c.suite_may_differ]  # the headline names ExecuTorch's steps, not the suite's
    return Upstream(commits, recorded, {**ledger_versions(results_root), **tags}, counted)


def load_step_limits(results_root: Path) -> list[StepLimit]:
    """Step limits as :func:`vkbench.site.runtime_page.machine_rows` reads them; device, tracer: the name."""
    from vkbench.site.runtime_page import machine_rows

    limits = []
    for row in machine_rows(results_root / "releases"):
        match = re.match(r"(?P<device>.+?)-tracer-(?P<tracer>on|off)$", row["machine"])
        device, tracer = (match["device"], match["tracer"]) if match else (row["machine"], "")
        for runner, limit in row["limits"].items():
            limits.append(StepLimit(device, tracer, runner, int(limit["limit"]), int(limit["cap"])))
    return sorted(limits, key=lambda s: (s.device, s.runner, s.tracer))


# --------------------------------------------------------------------------- plots


def _style() -> dict[str, Any]:
    """One look for every plot; ``svg.fonttype: none`` keeps labels as text (searchable, crisp)."""
    return {"svg.fonttype": "none", "svg.hashsalt": "vkbench", "font.family": "sans-serif",
            "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial"], "font.size": 9,
            "axes.spines.top": False, "axes.spines.right": False, "axes.edgecolor": "#888",
            "axes.titlesize": 10, "axes.titleweight": "bold", "axes.labelcolor": "#333",
            "xtick.color": "#555", "ytick.color": "#333", "legend.frameon": False,
            "axes.grid": True, "grid.color": "#e6e6e6", "grid.linewidth": 0.7, "axes.axisbelow": True}


def styled[**P](plot: Callable[P, str]) -> Callable[P, str]:
    """Draw and save inside ``rc_context``: the style applies to our plots only, not to the process."""

    @functools.wraps(plot)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> str:
        import matplotlib

        with matplotlib.rc_context(_style()):
            return plot(*args, **kwargs)

    return wrapper


def new_figure(width: float, height: float) -> Any:
    """A pyplot-free figure (no backend or figure registry involved), laid out by matplotlib."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def svg_of(fig: Any, key: str, label: str) -> str:
    """The figure as inline SVG: ids prefixed by ``key`` so several plots in one page never collide."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    ids = set(re.findall(r'\bid="([^"]+)"', text))
    text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{key}-{m.group(1)}"', text)
    text = re.sub(r'(href="#|url\(#)([^")]+)', lambda m: m.group(1) + (
        f"{key}-{m.group(2)}" if m.group(2) in ids else m.group(2)), text)
    text = re.sub(r'<svg\b([^>]*?)\swidth="[^"]*"\s+height="[^"]*"', r"<svg\1", text, count=1)
    return text.replace("<svg", f'<svg class="plot-svg" role="img" aria-label="{html.escape(label)}"', 1)


def _reason_colours(reasons: list[str]) -> dict[str, str]:
    colours, spare = {}, iter(SPARE_COLOURS * 4)
    for reason in reasons:
        colours[reason] = REASON_COLOURS.get(reason) or next(spare)
    return colours


def reasons_in_order(entries: list[EntryShare]) -> list[str]:
    """Reasons by CPU nodes over all entries, most first: one legend order for both plots."""
    totals: Counter[str] = Counter()
    for entry in entries:
        totals.update(entry.cpu_by_reason)
    return [reason for reason, _ in totals.most_common()]


@styled
def plot_share(entries: list[EntryShare]) -> str:
    """Left: each entry's Vulkan share (blocked entries: a bar in the colour of the stage that failed).
    Right: its CPU nodes stacked by partitioner reason. Shares near 100% hide the CPU slivers, so the
    CPU nodes get their own absolute axis."""
    reasons = reasons_in_order(entries)
    colours = _reason_colours(reasons)
    rows = len(entries)
    fig = new_figure(10, 0.75 + 0.24 * rows)
    left, right = fig.subplots(1, 2, sharey=True, width_ratios=[1.15, 1])
    y = list(range(rows))
    policies = [e.policy for e in entries]
    for i, entry in enumerate(entries):
        if i and policies[i] != policies[i - 1]:
            for ax in (left, right):
                ax.axhline(i - 0.5, color="#d4d4d4", linewidth=0.6)
        if entry.status != "lowered":
            colour = STAGE_COLOURS.get(entry.stage, "#9aa5b1")
            left.barh(i, 100, facecolor="#f1f3f6", height=0.7, hatch="///", edgecolor=colour, linewidth=0)
            left.text(2, i, f"blocked at {entry.stage or '?'}: {entry.error_type}", va="center",
                      fontsize=7.5, color="#1d2733")
            continue
        pct = 100 * entry.share
        left.barh(i, pct, color=DELEGATED, height=0.7)
        left.barh(i, 100 - pct, left=pct, color="#f2c9a8", height=0.7)
        left.text(1.5, i, f"{pct:.1f}% of {entry.total:,}", va="center", fontsize=7.5, color="white")
        start = 0
        for reason in reasons:
            count = entry.cpu_by_reason.get(reason, 0)
            if count:
                right.barh(i, count, left=start, color=colours[reason], height=0.7)
                start += count
        right.text(start + 0.6, i, str(start), va="center", fontsize=7.5, color="#333")
    left.set_yticks(y, [e.entry for e in entries], fontsize=8)
    left.set_ylim(rows - 0.5, -0.5)
    left.set_xlim(0, 100)
    left.set_xlabel("nodes delegated to Vulkan (%)")
    left.set_title("Vulkan share of each entry's graph", loc="left")
    right.set_xlabel("nodes left on the CPU")
    right.set_title("CPU nodes by partitioner reason", loc="left")
    right.set_xlim(0, max([e.cpu for e in entries] + [1]) * 1.12)
    right.tick_params(axis="y", length=0)
    for ax in (left, right):
        ax.grid(axis="y", visible=False)
    from matplotlib.patches import Patch

    handles = [Patch(color=colours[r], label=r) for r in reasons]
    stages = [s for s in STAGE_COLOURS if any(e.stage == s and e.status != "lowered" for e in entries)]
    handles += [Patch(facecolor="#f1f3f6", hatch="///", edgecolor=STAGE_COLOURS[s], label=f"blocked at {s}")
                for s in stages]
    fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=8)
    return svg_of(fig, "share", "Vulkan share and CPU nodes by reason, per policy entry")


@styled
def plot_blockers(blockers: list[dict[str, Any]], entries: list[EntryShare]) -> str:
    """Top CPU ops by nodes (stacked by reason, annotated with the entries each would fully delegate),
    next to the CPU nodes of all entries by reason."""
    reasons = reasons_in_order(entries)
    colours = _reason_colours(reasons)
    top = blockers[:12]
    fig = new_figure(10, 0.9 + 0.3 * max(len(top), len(reasons)))
    left, right = fig.subplots(1, 2, width_ratios=[1.9, 1])
    for i, blocker in enumerate(top):
        start = 0
        by_reason: Counter[str] = Counter()
        for reason, nodes in (blocker.get("reasons") or {"?": blocker.get("nodes", 0)}).items():
            by_reason[reason_category(reason)] += nodes
        for reason, nodes in by_reason.most_common():
            left.barh(i, nodes, left=start, color=colours.get(reason, "#7f7f7f"), height=0.7)
            start += nodes
        touched = len(blocker.get("entries", []))
        note = f"{_count(start, 'node', 'nodes')} · {_count(touched, 'entry', 'entries')}"
        if blocker.get("unblocks"):
            note += " · unblocks " + ", ".join(blocker["unblocks"])
        left.text(start + 1, i, note, va="center", fontsize=7.5,
                  color="#1d2733", fontweight="bold" if blocker.get("unblocks") else "normal")
    left.set_yticks(range(len(top)), [b["name"] for b in top], fontsize=8)
    left.set_ylim(len(top) - 0.5, -0.5)
    left.set_xlim(0, max([b.get("nodes", 0) for b in top] + [1]) * 2.1)
    left.set_xlabel("nodes left on the CPU (all lowered entries)")
    left.set_title("Top CPU ops", loc="left")
    left.grid(axis="y", visible=False)
    totals: Counter[str] = Counter()
    for entry in entries:
        totals.update(entry.cpu_by_reason)
    names = list(reasons)
    right.barh(range(len(names)), [totals[r] for r in names], color=[colours[r] for r in names], height=0.7)
    for i, reason in enumerate(names):
        right.text(totals[reason] + 2, i, str(totals[reason]), va="center", fontsize=7.5)
    right.set_yticks(range(len(names)), names, fontsize=8)
    right.set_ylim(len(names) - 0.5, -0.5)
    right.set_xlim(0, max(list(totals.values()) + [1]) * 1.18)
    right.set_xlabel("CPU nodes")
    right.set_title("CPU nodes by reason", loc="right")
    right.grid(axis="y", visible=False)
    return svg_of(fig, "blockers", "Top CPU ops and CPU nodes by partitioner reason")


@styled
def plot_scaling(scaling: list[Scaling]) -> str:
    """Left: partition seconds against blocks on log-log axes, with the fitted power law. Right: the
    same sizes split by partitioner phase, each phase with its own fitted exponent."""
    import numpy as np

    fig = new_figure(10, 3.6)
    left, right = fig.subplots(1, 2)
    palette = ("#2f6db5", "#e07b39", "#6d8f3a", "#8e6bbf")
    for scale, colour in zip(scaling, palette, strict=False):
        sizes = sorted(scale.seconds)
        seconds = [scale.seconds[n] for n in sizes]
        left.plot(sizes, seconds, "o-", color=colour, label=f"{scale.machine} ({scale.label})", zorder=3,
                  linewidth=0.8, alpha=0.9)
        for n, s in zip(sizes, seconds, strict=True):
            parts = f" ({int(scale.partitions[n])} partitions)" if n in scale.partitions else ""
            left.annotate(f"{s:.2f} s{parts}", (n, s), textcoords="offset points", xytext=(7, -11),
                          fontsize=7.5, color="#333")
        for a, b, slope in local_slopes(scale.seconds):
            middle = (math.sqrt(a * b), math.sqrt(scale.seconds[a] * scale.seconds[b]))
            left.annotate(f"slope {slope:.2f}", middle, textcoords="offset points", xytext=(-8, 8),
                          ha="right", fontsize=7, color=colour, style="italic")
        k = scale.exponent
        if k is not None:
            logs = np.log(np.array(sizes, dtype=float)), np.log(np.array(seconds))
            intercept = float(logs[1].mean() - k * logs[0].mean())
            grid = np.geomspace(min(sizes), max(sizes), 20)
            left.plot(grid, np.exp(intercept) * grid**k, "--", color=colour, linewidth=1.4,
                      label=f"fit: seconds ∝ n^{k:.2f}")
            missing = [n for n in scale.sizes if n not in scale.seconds]
            if missing:
                ahead = np.geomspace(max(sizes), max(missing), 10)
                left.plot(ahead, np.exp(intercept) * ahead**k, ":", color=colour, linewidth=1.2,
                          label=f"extrapolated to {max(missing)} (not recorded yet)")
    left.set_xscale("log")
    left.set_yscale("log")
    sizes_all = sorted({n for s in scaling for n in s.sizes})
    left.set_xticks(sizes_all, [str(n) for n in sizes_all])
    from matplotlib.ticker import FuncFormatter, LogLocator

    left.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    left.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    left.minorticks_off()
    left.set_xlabel("Blocks(n): repeated blocks in the graph")
    left.set_ylabel("VulkanPartitioner.partition, CPU seconds")
    left.set_title("Partition time, log-log", loc="left")
    left.legend(fontsize=7.5, loc="upper left")
    scale = scaling[0]
    if not scale.phases:
        right.text(0.5, 0.5, "phase split not recorded", ha="center", transform=right.transAxes)
    phases = sorted(scale.phases, key=lambda p: -max(scale.phases[p].values()))
    sizes = sorted({n for values in scale.phases.values() for n in values})
    phase_colours = dict(zip(phases, ("#2f6db5", "#e07b39", "#6d8f3a", "#8e6bbf", "#7f7f7f"), strict=False))
    bottom = [0.0] * len(sizes)
    x = range(len(sizes))
    for phase in phases:
        values = [scale.phases[phase].get(n, 0.0) for n in sizes]
        k = fit_exponent(scale.phases[phase])
        label = phase + (f" (∝ n^{k:.2f})" if k is not None else "")
        right.bar(x, values, bottom=bottom, color=phase_colours[phase], width=0.6, label=label)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    for i, total in enumerate(bottom):
        right.text(i, total, f"{total:.2f} s", ha="center", va="bottom", fontsize=7.5)
    timed = [(i, scale.seconds[n]) for i, n in enumerate(sizes) if n in scale.seconds]
    if timed:  # the left plot's points, for scale: CPU seconds (median), not the record's wall seconds
        right.plot([i for i, _ in timed], [s for _, s in timed], "_", color="#1d2733", markersize=24,
                   markeredgewidth=1.6, label=f"{PARTITION_TIME.rsplit('.', 1)[1]} (left: CPU s, median)")
    right.set_xticks(list(x), [str(n) for n in sizes])
    right.set_xlabel("Blocks(n)")
    right.set_ylabel("wall seconds per phase (one run)")
    right.set_title(f"Phase split ({scale.machine})", loc="left")
    right.set_ylim(0, max(bottom + [s for _, s in timed] + [1e-9]) * 1.15)
    right.legend(fontsize=7.5, loc="upper left")
    right.grid(axis="x", visible=False)
    return svg_of(fig, "scaling", "Partition scaling, log-log with fitted exponent, and phase split")


def _tick_label(commit: str, releases: dict[str, str]) -> str:
    """One line (the labels are vertical, so neighbours never touch): ``v1.4.1 e4d02f41`` or the hash."""
    version = releases.get(commit[:8])
    return f"v{version} {commit[:8]}" if version else commit[:8]


def history_ticks(commits: list[tuple[str, int]], releases: dict[str, str], changes: tuple[int, ...] = (),
                  room: int = 5) -> list[int]:
    """The commits that may get an x label, most wanted first: every release, the last commit, the
    first, the commits where the chart changes, then the middle of the widest stretch without a label
    while one is at least twice ``len(commits) / room`` positions wide. :func:`fit_ticks` then drops
    from the end of this list whatever would still overlap once drawn."""
    count = len(commits)
    if not count:
        return []
    wanted = [i for i, (c, _) in enumerate(commits) if c[:8] in releases]
    wanted = list(dict.fromkeys(wanted + [count - 1, 0] + [i for i in changes if 0 <= i < count]))
    gap = max(1, math.ceil(count / room))
    while True:
        shown = sorted(wanted)
        width, start = max((b - a, a) for a, b in zip(shown, shown[1:] + [shown[-1]], strict=True))
        if width < 2 * gap:
            return wanted
        wanted.append(start + width // 2)


def fit_ticks(fig: Any, ax: Any, candidates: list[int], labels: dict[int, str],
              pad_px: float = 2.0) -> list[int]:
    """Label the ``candidates`` (most wanted first) whose drawn labels do not overlap a more wanted one.

    The labels are measured where matplotlib draws them (after the layout), and the check repeats
    until the kept set fits as laid out, so no two x labels ever overlap."""
    kept = list(candidates)
    for _ in range(4):
        ax.set_xticks(sorted(kept), [labels[i] for i in sorted(kept)])
        fig.draw_without_rendering()
        boxes = {i: text.get_window_extent().padded(pad_px)  # the figure's own renderer, laid out
                 for i, text in zip(sorted(kept), ax.get_xticklabels(), strict=True)}
        fitting: list[int] = []
        for i in kept:
            if not any(boxes[i].overlaps(boxes[j]) for j in fitting):
                fitting.append(i)
        if fitting == kept:
            return sorted(kept)
        kept = fitting
    ax.set_xticks(sorted(kept), [labels[i] for i in sorted(kept)])
    return sorted(kept)


@styled
def plot_commit_series(series: CommitSeries, commits: list[tuple[str, int]], releases: dict[str, str],
                       key: str) -> str:
    """A small step chart: CPU ops per commit (solid), Vulkan programs for probes (dashed), and a red
    cross where the workload was recorded but did not lower (the series stops there)."""
    fig = new_figure(3.3, 2.35)  # room for the vertical commit labels
    ax = fig.subplots()
    x = list(range(len(commits)))
    top = 1.0
    palette = ("#e07b39", "#b5485d", "#8e6bbf", "#6d8f3a")
    for (line, values), colour in zip(sorted(series.cpu_ops.items()), palette, strict=False):
        ys = [math.nan if v is None else v for v in values]
        ax.step(x, ys, where="mid", color=colour, linewidth=1.8, label=f"CPU ops · {line}")
        ax.plot(x, ys, "o", color=colour, markersize=3.5)
        top = max([top] + [v for v in values if v is not None])
    for line, values in sorted(series.programs.items()):
        ys = [math.nan if v is None else v for v in values]
        ax.step(x, ys, where="mid", color=DELEGATED, linewidth=1.2, linestyle="--",
                label=f"Vulkan programs · {line}")
        top = max([top] + [v for v in values if v is not None])
    failed = sorted({i for marks in series.failures.values() for i in marks})
    if failed:
        ax.plot(failed, [0] * len(failed), "x", color=FAILED, markersize=6, markeredgewidth=1.8,
                clip_on=False, label="did not lower")
    ax.set_xlim(-0.5, len(commits) - 0.5)
    ax.set_ylim(-0.3, top * 1.25 + 0.3)
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=4))
    ax.tick_params(axis="y", labelsize=7)
    ax.tick_params(axis="x", which="major", labelsize=6.5, labelrotation=90, labelcolor="#666")
    ax.set_xticks(x, minor=True)  # every commit gets a tick; the labelled ones a longer one
    ax.tick_params(axis="x", which="minor", length=2)
    ax.grid(axis="x", visible=False)
    labels = {i: _tick_label(commit, releases) for i, (commit, _) in enumerate(commits)}
    shown = fit_ticks(fig, ax, history_ticks(commits, releases, series_changes(series)), labels)
    for i, text in zip(shown, ax.get_xticklabels(), strict=True):
        if commits[i][0][:8] in releases:
            text.set_color("#1d2733")
            text.set_fontweight("bold")
    return svg_of(fig, key, f"{series.kind} {series.name}: CPU ops per upstream commit")


def series_changes(series: CommitSeries) -> tuple[int, ...]:
    """The commits where a line of the chart changes value or starts failing (worth a label)."""
    changes: set[int] = set()
    for by_line in (series.cpu_ops, series.programs):
        for values in by_line.values():
            known = [(i, v) for i, v in enumerate(values) if v is not None]
            steps = zip(known, known[1:], strict=False)
            changes.update(i for (_, before), (i, after) in steps if before != after)
    for marks in series.failures.values():
        changes.update(i for i in marks if i - 1 not in marks)
    return tuple(sorted(changes))


@styled
def plot_step_limits(limits: list[StepLimit]) -> str:
    """One bar per device and runner and tracer setting, against the bisection cap (dashed)."""
    labels = [f"{s.device} · {s.runner} · tracer {s.tracer or '?'}" for s in limits]
    fig = new_figure(10, 0.8 + 0.32 * len(limits))
    ax = fig.subplots()
    y = range(len(limits))
    ax.barh(y, [s.limit for s in limits], color=[TRACER_COLOURS.get(s.tracer, "#7f7f7f") for s in limits],
            height=0.65)
    cap = max(s.cap for s in limits)
    ax.axvline(cap, color="#555", linestyle="--", linewidth=1)
    ax.text(cap, -0.75, f"cap {cap:,}", ha="right", va="bottom", fontsize=7.5, color="#555")
    for i, s in enumerate(limits):
        text = f"≥ {s.limit:,} (reached the cap)" if s.limit >= s.cap else f"{s.limit:,} steps"
        inside = s.limit > cap * 0.35
        ax.text(s.limit - cap * 0.01 if inside else s.limit + cap * 0.01, i, text, va="center",
                ha="right" if inside else "left", fontsize=7.5, color="white" if inside else "#333")
    ax.set_yticks(list(y), labels, fontsize=8)
    ax.set_ylim(len(limits) - 0.5, -1)
    ax.set_xlim(0, cap * 1.04)
    ax.set_xlabel("largest Many(n) that executes (2 dispatches per step)")
    ax.grid(axis="y", visible=False)
    return svg_of(fig, "steps", "Many(n) step limit per device, runner and tracer setting")


#: Ladder rung -> bar colour (best first).
RUNG_COLOURS = {"matches": "#2a9d8f", "runs": "#8ab17d", "loads": "#e9c46a", "lowered": "#f4a261",
                "not lowered": "#b0b0b0"}


@styled
def plot_ladder(counts: dict[str, dict[str, Counter[str]]]) -> str:
    """Per machine and runner, a stacked bar of how many stop at each rung of the ladder: policy entries
    on the left, probes (``probe/<name>`` rows) on their own axis at the right; the legend sits below
    the axes, so it covers no bar."""
    from matplotlib.ticker import MaxNLocator

    from vkbench.results.ladder import RUNGS as RUNG_NAMES

    labels = list(counts)
    kinds = [k for k in ("policy entries", "probes") if any(sum(counts[h][k].values()) for h in labels)]
    widest = {k: max(sum(counts[h][k].values()) for h in labels) for k in kinds}
    fig = new_figure(10, 1.1 + 0.36 * len(labels))
    axes = fig.subplots(1, len(kinds), sharey=True, squeeze=False,
                        width_ratios=[max(widest[k], 0.4 * max(widest.values()), 1) for k in kinds])[0]
    for ax, kind in zip(axes, kinds, strict=True):
        left = [0] * len(labels)
        for rung in RUNG_NAMES:
            widths = [counts[label][kind][rung] for label in labels]
            ax.barh(range(len(labels)), widths, left=left, color=RUNG_COLOURS[rung], height=0.65,
                    label=rung)
            for i, width in enumerate(widths):
                if width:
                    ax.text(left[i] + width / 2, i, str(width), ha="center", va="center", fontsize=7.5)
            left = [a + b for a, b in zip(left, widths, strict=True)]
        for i, total in enumerate(left):
            ax.annotate(f"of {total}", (total, i), xytext=(3, 0), textcoords="offset points", va="center",
                        fontsize=7.5, color="#555")
        ax.set_xlim(0, widest[kind] * 1.2)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # counts of entries, never 0.5
        ax.set_xlabel(kind)
        ax.set_title(kind[:1].upper() + kind[1:], loc="left")
        ax.grid(axis="y", visible=False)
    axes[0].set_yticks(range(len(labels)), labels, fontsize=8)
    axes[0].set_ylim(len(labels) - 0.5, -0.5)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncols=len(RUNG_NAMES), fontsize=8,
               title="the highest rung reached on Vulkan", title_fontsize=8)
    return svg_of(fig, "ladder", "Policy entries and probes per ladder rung, per machine and runner")


# --------------------------------------------------------------------------- headlines


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def share_headline(survey: Survey) -> str:
    """Overall Vulkan share, the biggest entry's share, and how many entries never reach the partitioner."""
    lowered = [e for e in survey.entries if e.status == "lowered"]
    blocked = [e for e in survey.entries if e.status != "lowered"]
    total, delegated = sum(e.total for e in lowered), sum(e.delegated for e in lowered)
    text = f"Vulkan takes {_pct(delegated, total)} of the {total:,} nodes of {len(lowered)} lowered entries"
    if lowered:
        big = max(lowered, key=lambda e: e.total)
        text += f" ({_pct(big.delegated, big.total)} of {big.entry}'s {big.total:,})"
    if blocked:
        stages = Counter(e.stage or "?" for e in blocked)
        verb = "is" if len(blocked) == 1 else "are"
        text += (f"; {len(blocked)} of {len(survey.entries)} entries {verb} blocked before delegation ("
                 + ", ".join(f"{n} at {s}" for s, n in stages.most_common()) + ")")
    return text


def blockers_headline(blockers: list[dict[str, Any]], entries: list[EntryShare]) -> str:
    """The op with most CPU nodes, the op that alone fully delegates most entries, the top reason."""
    if not blockers:
        return "No CPU op blocks full delegation."
    top = max(blockers, key=lambda b: b.get("nodes", 0))
    text = (f"{top['name']} keeps the most nodes on the CPU ({top['nodes']} in "
            f"{_count(len(top.get('entries', [])), 'entry', 'entries')})")
    unblocking = max(blockers, key=lambda b: len(b.get("unblocks", [])))
    if unblocking.get("unblocks"):
        text += (f"; supporting {unblocking['name']} alone would fully delegate "
                 + " and ".join(unblocking["unblocks"]))
    reasons = reasons_in_order(entries)
    if reasons:
        totals: Counter[str] = Counter()
        for entry in entries:
            totals.update(entry.cpu_by_reason)
        cpu = sum(totals.values())
        text += f"; “{reasons[0]}” explains {_pct(totals[reasons[0]], cpu)} of {cpu} CPU nodes"
    return text


def scaling_headline(scale: Scaling) -> str:
    """Fitted exponent, the measured range, and the phase that dominates at the largest size."""
    k = scale.exponent
    sizes = sorted(scale.seconds)
    text = (f"Partitioning grows as n^{k:.2f}" if k is not None else "Partition time")
    text += (f": {scale.seconds[sizes[0]]:.2f} s at {sizes[0]} blocks → "
             f"{scale.seconds[sizes[-1]]:.2f} s at {sizes[-1]}")
    slopes = local_slopes(scale.seconds)
    if len(slopes) >= 2:
        text += f" (local slope {slopes[0][2]:.2f} → {slopes[-1][2]:.2f})"
    at = max((n for values in scale.phases.values() for n in values), default=None)
    if at is not None:
        shares = {p: v[at] for p, v in scale.phases.items() if at in v}
        phase = max(shares, key=lambda p: shares[p])
        k_phase = fit_exponent(scale.phases[phase])
        text += f"; {phase} takes {_pct(shares[phase], sum(shares.values()))} at {at} blocks"
        if k_phase is not None:
            text += f" and grows as n^{k_phase:.2f}"
    return text


def upstream_headline(upstream: Upstream) -> str:
    """How many commits over which dates, then the regressions by name, then the improvements."""
    import datetime as dt

    def day(ms: int) -> str:
        return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d")

    def name(commit: str) -> str:
        version = upstream.releases.get(commit[:8])
        return commit[:8] + (f" (v{version})" if version else "")

    def where(change: Change) -> str:
        return f"at {name(change.commit)}" if change.exact else \
            f"between {name(change.previous)} and {name(change.commit)}"

    def told(rows: list[Change]) -> list[str]:
        """One phrase per step; failures at the same place are told together."""
        failing: dict[str, list[str]] = {}
        phrases = []
        for change in rows:
            if change.fails:
                failing.setdefault(where(change), []).append(change.param)
            elif change.benchmark == catalogue.PROBE_FAILED.name:
                phrases.append(f"{change.param} lowers again {where(change)}")
            else:
                phrases.append(f"{change.param} {change.before} → {change.after} CPU ops {where(change)}")
        grouped = [(f"{', '.join(params[:2])} and {len(params) - 2} more" if len(params) > 3 else
                    ", ".join(params)) + (" fail " if len(params) > 1 else " fails ") + place
                   for place, params in failing.items()]
        return grouped + phrases

    commits = upstream.commits
    text = (f"{len(commits)} upstream commit{'s' if len(commits) != 1 else ''} recorded "
            f"({day(commits[0][1])} → {day(commits[-1][1])})")
    if not upstream.changes:
        return text + f": no probe or policy changed its CPU-op count across {len(upstream.series)} charts"
    parts = []
    for label, rows in (("regressions", [c for c in upstream.changes if c.regression]),
                        ("improvements", [c for c in upstream.changes if not c.regression])):
        if rows:
            phrases = told(rows)
            more = f" (+{len(phrases) - 3} more)" if len(phrases) > 3 else ""
            parts.append(f"{len(rows)} {label}: " + "; ".join(phrases[:3]) + more)
    return text + ". " + ". ".join(parts)


def steps_headline(limits: list[StepLimit]) -> str:
    """Per tracer setting, the step limits seen across devices (the tracer is the known limiter)."""
    parts: list[str] = []
    everywhere = sorted({s.device for s in limits})
    for tracer in ("on", "off", ""):
        group = [s for s in limits if s.tracer == tracer]
        if not group:
            continue
        devices = sorted({s.device for s in group})
        who = " and ".join(devices) if len(devices) <= 3 else f"{len(devices)} devices"
        if parts and devices == everywhere and len(devices) > 1:
            who = "every device"
        subject = "it" if parts else "Many(n)"
        setting = (("with it " if parts else "with the event tracer ") + tracer.upper() if tracer
                   else "with an unnamed tracer setting")
        if all(s.limit >= s.cap for s in group):
            parts.append(f"{setting}, {subject} reaches the {group[0].cap:,}-step cap on {who}")
            continue
        low, high = min(s.limit for s in group), max(s.limit for s in group)
        values = f"{low:,}" if low == high else f"{low:,}–{high:,}"
        parts.append(f"{setting}, {subject} stops at {values} steps on {who}")
    text = "; ".join(parts)
    return text[:1].upper() + text[1:]


# --------------------------------------------------------------------------- page


@dataclass
class Section:
    id: str
    kicker: str
    headline: str
    body: str


CSS = """
:root{--ink:#1d2733;--muted:#5b6673;--line:#e3e7ec;--accent:#2f6db5}
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);
background:#f5f7fa;line-height:1.45}
header{background:#17212e;color:#fff;padding:1.4em 2em 1.1em}
header h1{margin:0 0 .2em;font-size:1.5em;font-weight:650}
header p{margin:0;color:#b9c3cf}
nav{margin-top:.8em;display:flex;flex-wrap:wrap;gap:.4em 1.2em}
nav a{color:#9cc4f2;text-decoration:none;font-weight:600}nav a:hover{text-decoration:underline}
nav span{color:#8c98a6;font-weight:400;font-size:.85em}
main{max-width:1120px;margin:0 auto;padding:1.2em 1.5em 2em}
.tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(190px,1fr));gap:.8em;margin:.4em 0 1.2em}
.tile{background:#fff;border:1px solid var(--line);border-radius:10px;padding:.8em 1em}
.tile b{display:block;font-size:1.7em;line-height:1.1;color:var(--accent)}
.tile span{color:var(--muted);font-size:.85em}
section{background:#fff;border:1px solid var(--line);border-radius:12px;padding:1.1em 1.4em 1.2em;
margin:0 0 1.2em}
.kicker{margin:0;text-transform:uppercase;letter-spacing:.06em;font-size:.75em;font-weight:700;color:var(--muted)}
h2.headline{margin:.25em 0 .6em;font-size:1.2em;font-weight:600}
figure{margin:0}
svg.plot-svg{width:100%;height:auto;display:block}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:.6em}
.grid figure{border:1px solid var(--line);border-radius:8px;padding:.3em .3em 0}
figcaption{font-size:.85em;font-weight:600;padding:.1em .3em}
figcaption small{color:var(--muted);font-weight:400}
.note{color:var(--muted);font-size:.85em;margin:.5em 0 0}
.empty{color:var(--muted);font-style:italic;margin:0}
table{border-collapse:collapse;font-size:.82em;margin-top:.8em;width:100%}
th,td{border-bottom:1px solid var(--line);padding:.3em .5em;text-align:left;vertical-align:top}
th{color:var(--muted);font-weight:600;white-space:nowrap}td:first-child{white-space:nowrap}
.table-scroll{overflow:auto;max-height:30em;margin-top:.8em;border:1px solid var(--line);border-radius:8px}
.table-scroll table{margin-top:0}
.table-scroll thead th{position:sticky;top:0;background:#fff;box-shadow:inset 0 -1px var(--line)}
table.ladder th{white-space:normal;min-width:9em}
td.rung-matches{color:#1f7a6f;font-weight:600}td.rung-runs{color:#4f7a3f}td.rung-loads{color:#8a6d12}
td.rung-lowered{color:#a5581c}td.rung-not-lowered{color:#8a8f96}
tr.probe td:first-child{color:var(--muted)}
code{font-size:.92em}
.key{display:inline-block;width:1.6em;height:.25em;vertical-align:middle;margin:0 .3em 0 .8em}
footer{color:var(--muted);font-size:.8em;text-align:center;padding:0 1em 2em}
"""


def figure(svg: str, key: str, caption: str = "") -> str:
    cap = f"<figcaption>{caption}</figcaption>" if caption else ""
    return f'<figure class="plot" data-plot="{html.escape(key)}">{cap}{svg}</figure>'


def share_section(survey: Survey | None) -> Section:
    if survey is None or not survey.entries:
        return Section("share", "Vulkan share per policy", "No policy survey committed yet.",
                       '<p class="empty">Run <code>vkbench policies</code> to survey the policies.</p>')
    note = (f'<p class="note">From <code>results/policies/{html.escape(survey.source)}</code> '
            f"(ExecuTorch {html.escape(survey.version)}, {html.escape(survey.machine)}). Each entry is one "
            "exported graph of a policy; the CPU nodes are split by the first reason the Vulkan partitioner "
            "gave (dtype messages grouped by dtype). See <a href=\"coverage.html\">coverage</a> for every "
            "op and reason.</p>")
    return Section("share", "Vulkan share per policy", share_headline(survey),
                   figure(plot_share(survey.entries), "share") + note)


def blockers_section(survey: Survey | None) -> Section:
    if survey is None:
        return Section("blockers", "Top blockers", "No policy survey committed yet.", "")
    lowered = [e for e in survey.entries if e.status == "lowered"]
    blocked = [e for e in survey.entries if e.status != "lowered"]
    body = figure(plot_blockers(survey.blockers, lowered), "blockers") if survey.blockers else ""
    if blocked:
        body += blocked_table(blocked)
    body += ('<p class="note">Ops ranked as <code>vkbench policies</code> ranks them: entries unblocked, '
             "entries touched, nodes. “Unblocks”: the entries whose only CPU op this is, so supporting it "
             "delegates them whole. The table lists the entries that never reach the partitioner; the "
             '<a href="bugs.html">bug list</a> gives each failure its owner, probe and reproducer.</p>')
    return Section("blockers", "Top blockers", blockers_headline(survey.blockers, lowered), body)


def blocked_table(blocked: list[EntryShare]) -> str:
    """Blocked entries grouped by (stage, error type): a few rows, one message each (text, not a plot)."""
    groups: dict[tuple[str, str], list[EntryShare]] = {}
    for entry in blocked:
        groups.setdefault((entry.stage, entry.error_type), []).append(entry)
    order = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    rows = "".join(
        f"<tr><td>{html.escape(stage)}</td><td>{html.escape(error_type)}</td>"
        f"<td>{', '.join(f'<code>{html.escape(e.entry)}</code>' for e in group)}</td>"
        f"<td>{html.escape(_short(group[0].error, 110))}</td></tr>"
        for (stage, error_type), group in order)
    return ('<table class="blocked"><thead><tr><th>blocked at</th><th>error</th><th>entries</th>'
            f"<th>message (first entry)</th></tr></thead><tbody>{rows}</tbody></table>")


def _short(text: str, limit: int = 140) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def scaling_section(scaling: list[Scaling]) -> Section:
    if not scaling:
        return Section("scaling", "Partition scaling", "No partition scaling recorded yet.",
                       '<p class="empty">Record a release (<code>vkbench record</code>) to time '
                       "<code>bench_partition.PartitionScaling</code>.</p>")
    scale = scaling[0]
    exponents = ", ".join(f'<b class="exponent" data-machine="{html.escape(s.machine)}">'
                          f"k = {s.exponent:.2f}</b> on {html.escape(s.machine)}"
                          for s in scaling if s.exponent is not None)
    missing = [n for n in scale.sizes if n not in scale.seconds]
    gap = (f" {', '.join(map(str, missing))} blocks not recorded yet (the standard tier times them)."
           if missing else "")
    note = (f'<p class="note">Fitted exponent (least squares of log seconds on log n, '
            f"<code>vkbench.workloads.scaling.loglog_exponent</code>): {exponents}. "
            f"<code>{PARTITION_TIME}</code> (asv CPU time) and <code>PartitionScalingPhases</code> "
            f"from {html.escape(scale.label)}.{gap}</p>")
    gap_at = phase_gap(scale)
    caption = ""
    if gap_at:
        n, line, bars = gap_at
        caption = (f"Line: CPU seconds, median of samples · bars: wall seconds of one instrumented run "
                   f"<small>(at {n} blocks {bars:.2f} s against {line:.2f} s; why: below)</small>")
        note += phase_gap_note(scale, *gap_at)
    return Section("scaling", "Partition scaling", scaling_headline(scale),
                   figure(plot_scaling(scaling), "scaling", caption) + note)


def phase_gap(scale: Scaling) -> tuple[int, float, float] | None:
    """The largest size with both a ``time_partition`` value and phases: (n, line seconds, bar seconds)."""
    both = [n for n in sorted(scale.seconds) if scale.phase_total(n) is not None]
    return (both[-1], scale.seconds[both[-1]], scale.phase_total(both[-1]) or 0.0) if both else None


def phase_gap_note(scale: Scaling, n: int, line: float, bars: float) -> str:
    """Why the phase bars and the line disagree, with the two numbers (from the data) and the other sizes'."""
    samples = scale.samples.get(n)
    median = (f"the median of {_count(samples, 'sample', 'samples')} at {n} blocks" if samples
              else "the median of its samples")
    others = "; ".join(f"{m} blocks {scale.phase_total(m):.2f} s against {scale.seconds[m]:.2f} s"
                       for m in sorted(scale.seconds) if m != n and scale.phase_total(m) is not None)
    return (f'<p class="note phase-gap" data-blocks="{n}" data-line="{line:.2f}" data-bars="{bars:.2f}">'
            f"Why the bars and the line differ: at {n} blocks the phase bars add up to <b>{bars:.2f} s</b> "
            f"and the line reads <b>{line:.2f} s</b> ({_signed_pct(bars - line, line)}). They are two "
            f"measurements. The line is <code>{PARTITION_TIME}</code>: process CPU seconds "
            f"(<code>time.process_time</code>), {median}. The bars are <code>PartitionScalingPhases"
            ".track_phase_seconds</code>: the one instrumented partition per size that the shared record "
            "makes (<code>vkbench.workloads.scaling.measure</code>), each phase timed by the wall clock "
            "(<code>time.perf_counter</code>, exclusive) while a thread samples peak RSS. Both call the same "
            "instrumented <code>timed_partition</code>, so the gap is not the phase wrappers (they cost the "
            "same in both): it is wall against CPU time (the wall clock also counts time the process spent "
            "off the CPU: other jobs on a shared machine, the RSS thread) and one run against a median."
            f"{f' Other sizes, bars against line: {others}.' if others else ''}</p>")


def _signed_pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:+.0f}%" if whole else "n/a"


def upstream_section(upstream: Upstream, has_site: bool) -> Section:
    if not upstream.commits or not upstream.series:
        return Section("upstream", "Coverage across upstream commits",
                       "No upstream commits recorded yet (vkbench upstream records them).", "")
    key = (f'<p class="note"><span class="key" style="background:#e07b39"></span>CPU ops (lower is better)'
           f'<span class="key" style="border-top:2px dashed {DELEGATED};height:0"></span>Vulkan programs '
           "(probes). x: commits in commit-date order, every commit a tick; a release tag (bold) under a "
           "commit names it (the tag stored beside the commit's results, and the ledger's releases).</p>")
    charts = []
    for i, series in enumerate(upstream.series):
        svg = plot_commit_series(series, upstream.commits, upstream.releases, f"up{i}")
        caption = f"{html.escape(series.name)} <small>{series.kind}</small>" + failure_caption(
            series, upstream.commits)
        charts.append(figure(svg, f"upstream-{series.kind}-{series.name}", caption))
    link = (' Per-benchmark history: <a href="upstream/index.html">upstream asv site</a>.'
            if has_site else "") + (' Every step, its commit, reasons and a command to reproduce it: '
                                    '<a href="changes.html">changes</a>.')
    fed = sorted({name for series in upstream.series for name in series.benchmarks})
    note = (f'<p class="note">asv results of {", ".join(f"<code>{html.escape(n)}</code>" for n in fed)} '
            f"under <code>results/upstream/</code>; a red cross: recorded, did not lower (reason in the "
            f"caption, from the file's sidecar).{link}</p>")
    return Section("upstream", "Coverage across upstream commits", upstream_headline(upstream),
                   key + f'<div class="grid">{"".join(charts)}</div>' + note)


def failure_caption(series: CommitSeries, commits: list[tuple[str, int]]) -> str:
    """Where the series stops and why: each run of failures (broken only by a commit where the
    workload has a value, or by a new reason; commits that did not record it don't break a run)."""
    marks: dict[int, str] = {}
    for by_commit in series.failures.values():
        marks.update(by_commit)
    if not marks:
        return ""
    valued = {i for values in series.cpu_ops.values() for i, v in enumerate(values) if v is not None}
    runs: list[list[int]] = []
    for i in sorted(marks):
        if runs and marks[runs[-1][0]] == marks[i] and not any(runs[-1][-1] < j < i for j in valued):
            runs[-1].append(i)
        else:
            runs.append([i])
    parts = [f"from <code>{commits[run[0]][0][:8]}</code> "
             f"({_count(len(run), 'recorded commit', 'recorded commits')}): "
             f"{html.escape(_short(marks[run[0]], 120))}" for run in runs[:2]]
    more = f"; {len(runs) - 2} more" if len(runs) > 2 else ""
    return f'<br><small class="failed" title="{html.escape(marks[runs[0][0]])}">✕ did not lower ' + "; ".join(
        parts) + more + "</small>"


def steps_section(limits: list[StepLimit]) -> Section:
    if not limits:
        return Section("step-limits", "Step limits per device", "No runtime results recorded yet.",
                       '<p class="empty">See <a href="runtime.html">the runtime page</a>.</p>')
    note = ('<p class="note"><code>Many(n)</code> is <code>x*1.0001+0.001</code> n times in one Vulkan '
            "delegate; the limit is the bisection cap minus asv's <code>track_steps_short_of_cap</code>. "
            'Latencies per n: <a href="runtime.html">runtime page</a>.</p>')
    return Section("step-limits", "Step limits per device", steps_headline(limits),
                   figure(plot_step_limits(limits), "step-limits") + note)


def load_ladder(results_root: Path) -> tuple[list[str], list[list[str]]]:
    """The ladder table of :func:`vkbench.site.runtime_page.ladder_table` over ``results_root/releases``."""
    from vkbench.site.runtime_page import ladder_table, machine_rows

    return ladder_table(machine_rows(results_root / "releases"))


def ladder_section(ladder: tuple[list[str], list[list[str]]]) -> Section:
    headers, table = ladder
    if not table:
        return Section("ladder", "How far policies get on Vulkan", "No policy ladder recorded yet.",
                       '<p class="empty">Record <code>bench_policy_runtime.PolicyLadder</code> on a Vulkan '
                       "machine.</p>")
    from vkbench.site.runtime_page import is_probe, ladder_counts, ladder_headline

    def cell(text: str) -> str:
        rung = f' class="rung-{text.replace(" ", "-")}"' if text in RUNG_COLOURS else ""
        return f"<td{rung}>{html.escape(text)}</td>"

    cells = "".join(f'<tr class="{"probe" if is_probe(row[0]) else "policy"}">' + "".join(map(cell, row))
                    + "</tr>" for row in table)
    body = (figure(plot_ladder(ladder_counts(headers, table)), "ladder")
            + '<div class="table-scroll"><table class="ladder"><thead><tr>'
            + "".join(f"<th>{html.escape(h)}</th>" for h in headers)
            + f"</tr></thead><tbody>{cells}</tbody></table></div>"
            + '<p class="note">Lowered → the <code>.pte</code> loads → it runs → its outputs match eager '
              "(SNR ≥ 40 dB): asv's <code>PolicyLadder.track_rungs_short</code>; probes (rows "
              "<code>probe/…</code>, <code>ProbeLadder</code>) are counted apart and listed last; errors per "
              'stage on the <a href="runtime.html">runtime page</a>; each load or run failure, with its '
              'probe and reproducer, in the <a href="bugs.html">bug list</a>.</p>')
    return Section("ladder", "How far policies get on Vulkan", ladder_headline(headers, table), body)


def tiles(survey: Survey | None, scaling: list[Scaling], upstream: Upstream,
          limits: list[StepLimit]) -> str:
    """The numbers a visitor should leave with, one per section."""
    items = []
    if survey:
        lowered = [e for e in survey.entries if e.status == "lowered"]
        total = sum(e.total for e in lowered)
        items.append((_pct(sum(e.delegated for e in lowered), total), f"of {total:,} policy nodes on Vulkan"))
        items.append((f"{len(survey.entries) - len(lowered)} / {len(survey.entries)}",
                      "policy entries blocked before delegation"))
    if scaling and scaling[0].exponent is not None:
        items.append((f"n^{scaling[0].exponent:.2f}", "partition time growth with graph size"))
    items.append((str(len(upstream.commits)), "upstream commits recorded"))
    traced = [s.limit for s in limits if s.tracer == "on"]
    if traced:
        items.append((f"{min(traced):,}", "Many(n) steps with the event tracer on"))
    return '<div class="tiles">' + "".join(
        f'<div class="tile"><b>{html.escape(v)}</b><span>{html.escape(t)}</span></div>' for v, t in items
    ) + "</div>"


def default_links(html_root: Path) -> list[Link]:
    """Links to what exists next to the page: the asv sites, coverage and runtime pages."""
    about = {"releases": "installed-release ledger", "upstream": "upstream commit ranges"}
    links = [Link(f"{name}/index.html", name, about[name]) for name in ("releases", "upstream")
             if (html_root / name / "index.html").exists()]
    return links + [Link("coverage.html", "Coverage", "CPU op × partitioner reason, per commit"),
                    Link("runtime.html", "Vulkan runtime", "step limits and latency per device"),
                    Link("bugs.html", "Bug list", "each distinct failure: owner, probe, reproducer")]


def render(sections: list[Section], links: list[Link], tiles_html: str) -> str:
    nav = "".join(f'<a href="{html.escape(link.href)}">{html.escape(link.title)}</a>'
                  f"<span>{html.escape(link.about)}</span>" for link in links)
    body = "".join(
        f'<section id="{s.id}"><p class="kicker">{html.escape(s.kicker)}</p>'
        f'<h2 class="headline">{html.escape(s.headline)}</h2>{s.body}</section>' for s in sections)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>vkbench: the ExecuTorch Vulkan backend on LeRobot policies</title><style>{CSS}</style>"
            "</head><body><header><h1>vkbench: the ExecuTorch Vulkan backend on LeRobot policies</h1>"
            "<p>How much of each policy runs on Vulkan, what keeps the rest on the CPU, how the "
            "partitioner scales, how coverage moves upstream, and how far the runtime goes.</p>"
            f"<nav>{nav}</nav></header><main>{tiles_html}{body}</main>"
            "<footer>Generated by <code>vkbench.site.dashboard</code> from the committed results; "
            "every plot is inline SVG (matplotlib), nothing is loaded from the network; the asv sites load "
            "vendored scripts (<code>vendor/manifest.json</code>).</footer>"
            "</body></html>\n")


def write_dashboard(html_root: Path, results_root: Path = RESULTS_ROOT, *,
                    links: list[Link] | None = None) -> Path:
    """Write ``html_root/index.html`` from ``results_root``; return its path."""
    html_root, results_root = Path(html_root), Path(results_root)
    html_root.mkdir(parents=True, exist_ok=True)
    survey = load_survey(results_root)
    scaling = load_scaling(results_root)
    upstream = load_upstream(results_root)
    limits = load_step_limits(results_root)
    sections = [share_section(survey), blockers_section(survey), scaling_section(scaling),
                upstream_section(upstream, (html_root / "upstream" / "index.html").exists()),
                steps_section(limits), ladder_section(load_ladder(results_root))]
    page = html_root / "index.html"
    page.write_text(render(sections, links if links is not None else default_links(html_root),
                           tiles(survey, scaling, upstream, limits)))
    return page


__all__ = ["Link", "load_ladder", "load_scaling", "load_step_limits", "load_survey", "load_upstream",
           "write_dashboard"]
