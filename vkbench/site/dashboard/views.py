"""The dashboard's views: what each section shows, taken from :class:`~vkbench.site.data.SiteData`.

The site's loader has read the results root once; the loaders here (``load_*``) only select and
shape what the dashboard draws: the policy survey's per-entry shares, the partition scaling of the
newest release per machine, the coverage history across upstream commits (with the publish's
changes table), the step limits and the policy ladder of the runtime rows.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from vkbench.results.bug_rows import BugRow
from vkbench.results.changes import Change
from vkbench.results.model import ResultSet, finite
from vkbench.results.surveys import SurveyFile
from vkbench.site.data import SiteData
from vkbench.site.runtime_page import ladder_table
from vkbench.suite import catalogue
from vkbench.suite.identity import carries_digest

#: What a failure recorded by a suite older than the digest says: those suites stored no reasons.
NO_REASON_OLDER = "recorded by an older vkbench suite, which stored no reason"

PARTITION_TIME = catalogue.PARTITION_TIME.name
PARTITION_PHASES = catalogue.PARTITION_PHASES.name
PARTITION_COUNT = catalogue.PARTITION_COUNT.name
#: ExecuTorch's pattern search, the phase the bug row :data:`PATTERN_BUG` spends.
FUSABLE_PHASE = "fusable_patterns"
#: The bug list's performance row behind most of :data:`FUSABLE_PHASE` (``vkbench/results/bugs.toml``).
PATTERN_BUG = "partition_reexports_pattern_graphs"
#: The history charts: (kind, CPU-op track, Vulkan-program track, lowering-failed track or None).
HISTORY_TRACKS = (
    ("probe", catalogue.PROBE_CPU_OPS, catalogue.PROBE_PROGRAMS, catalogue.PROBE_FAILED),
    ("policy", catalogue.POLICY_CPU_OPS, catalogue.POLICY_PROGRAMS, None),
    ("policy", catalogue.VLA_CPU_OPS, catalogue.VLA_PROGRAMS, None),
)

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
    #: ExecuTorch's own counts (``get_delegation_info``); None in records made before vkbench took them.
    et_delegated: int | None = None
    et_non_delegated: int | None = None

    @property
    def cpu(self) -> int:
        return sum(self.cpu_by_reason.values())

    @property
    def share(self) -> float:
        return self.delegated / self.total if self.total else 0.0

    @property
    def et_share(self) -> float | None:
        """Delegated share by ExecuTorch's count (getitem nodes included), None where not recorded."""
        if self.et_delegated is None or self.et_non_delegated is None:
            return None
        total = self.et_delegated + self.et_non_delegated
        return self.et_delegated / total if total else 0.0


@dataclass
class Survey:
    """A ``results/policies`` file: which ExecuTorch and machine, entries, blockers."""

    source: str
    version: str
    machine: str
    entries: list[EntryShare]
    blockers: list[dict[str, Any]]  #: ``blockers.by_op`` of the file


def load_survey(data: SiteData) -> Survey | None:
    """The newest policy survey of the results root, per entry (None if none is committed)."""
    return survey_of(data.recorded.survey)


def survey_of(survey: SurveyFile | None) -> Survey | None:
    """A stored survey as the dashboard shows it: each entry's CPU nodes split by reason."""
    if survey is None:
        return None
    return Survey(survey.name, survey.version, survey.machine, [_entry_share(row) for row in survey.rows],
                  list(survey.blockers.get("by_op", [])))


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

    def phase_share(self, phase: str, n: int) -> float | None:
        """``phase``'s part of the phase bars at ``n`` (None where the record has no such phase there)."""
        total, value = self.phase_total(n), self.phases.get(phase, {}).get(n)
        return value / total if value is not None and total else None


@dataclass
class CommitSeries:
    """One step chart: a probe or policy entry, a line per (machine, env), values per commit.

    ``failures``: per line, the commits where the workload was recorded but did
    not lower (its value is a gap), with the stored reason where there is one.
    ``older``: per line, the commits whose record of it predates the suite digest
    (an older vkbench suite): drawn apart, never compared (``vkbench changes``).
    """

    kind: str
    name: str
    cpu_ops: dict[str, list[float | None]]
    programs: dict[str, list[float | None]] = field(default_factory=dict)
    failures: dict[str, dict[int, str]] = field(default_factory=dict)
    benchmarks: set[str] = field(default_factory=set)
    older: dict[str, set[int]] = field(default_factory=dict)


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
    share.et_delegated = coverage.get("et_delegated_nodes")
    share.et_non_delegated = coverage.get("et_non_delegated_nodes")
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

def reasons_in_order(entries: list[EntryShare]) -> list[str]:
    """Reasons by CPU nodes over all entries, most first: one legend order for both plots."""
    totals: Counter[str] = Counter()
    for entry in entries:
        totals.update(entry.cpu_by_reason)
    return [reason for reason, _ in totals.most_common()]


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


def load_scaling(data: SiteData) -> list[Scaling]:
    """Per machine, the newest release commit with at least two timed sizes (400 blocks may be NaN)."""
    versions = data.release_names
    newest: dict[str, Scaling] = {}
    for asv in sorted(data.recorded.releases.files, key=lambda f: f.date):
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


def load_pattern_bug(data: SiteData) -> BugRow | None:
    """The bug row :data:`PATTERN_BUG`, when the publish's bug list has it."""
    return next((row for row in data.bugs if row.id == PATTERN_BUG), None)


@dataclass(frozen=True)
class TorchStack:
    """Which torch the recorded numbers come from: per torch a run lowered with, and per torch the
    recorded commits pin (``torch_pin.py``), how many result files say so."""

    used: dict[str, int]
    pinned: dict[str, int]


def load_torch_stack(data: SiteData) -> TorchStack:
    """The torch of every recorded result file (releases and upstream), from its sidecar's provenance."""
    files = [*data.recorded.releases.files, *data.recorded.upstream.files]
    used = Counter(f.sidecar.provenance.torch or "not stored" for f in files)
    pinned = Counter(f.sidecar.provenance.torch_pin for f in files if f.sidecar.provenance.torch_pin)
    return TorchStack(dict(sorted(used.items())), dict(sorted(pinned.items())))


def load_upstream(data: SiteData) -> Upstream:
    """Probe and policy coverage per upstream commit, commits ordered by asv's commit ``date``.

    Commits are named by release from the ledger (an installed release's ``git_version``) and from
    the release tag stored beside each upstream result file (its sidecar's provenance).

    A point whose benchmark was recorded without a value (the workload did
    not lower: asv stores NaN) is a failure, with the reason from the
    file's sidecar where one was stored.
    """
    found = data.recorded.upstream
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
                older = not carries_digest(f.version(benchmark.name))
                for point in f.points(benchmark.name):
                    name = point.params[0]
                    chart = charts.setdefault((kind, name), CommitSeries(kind, name, {}))
                    chart.benchmarks.add(benchmark.name)
                    values = getattr(chart, attr).setdefault(line, [None] * len(commits))
                    values[index[f.commit]] = point.value
                    if attr == "cpu_ops" and older:
                        chart.older.setdefault(line, set()).add(index[f.commit])
                    if attr == "cpu_ops" and point.value is None:
                        why = point.failure or f.failure(benchmark.class_name, point.params)
                        reason = f"{why.stage}: {why.error}" if why else \
                            f"did not lower ({NO_REASON_OLDER if older else 'no reason stored'})"
                        chart.failures.setdefault(line, {})[index[f.commit]] = reason
            if failed is None:
                continue
            for point in f.points(failed.name):  # a failure recorded as a value (ProbeFailure)
                chart = charts.get((kind, point.params[0]))
                if chart is not None and point.value:
                    why = f.failure(failed.name, point.params)  # stored with the failure's value
                    older = not carries_digest(f.version(failed.name))
                    reason = f"{why.stage}: {why.error}" if why else \
                        f"lowering failed ({NO_REASON_OLDER if older else 'no reason stored'})"
                    chart.failures.setdefault(line, {}).setdefault(index[f.commit], reason)
    series = sorted(charts.values(), key=lambda s: (s.kind != "probe", s.name))
    recorded = [s for s in series if any(v is not None for values in s.cpu_ops.values() for v in values)
                or s.failures]
    tags = {f.commit[:8]: str(f.sidecar.provenance.release).lstrip("v") for f in files
            if f.sidecar.provenance.release}
    steps = data.changes.changes
    charted = {cpu.name for _, cpu, _, _ in HISTORY_TRACKS}  # the CPU-op counts the charts draw
    # Steps across a change of the suite are not rows (``data.changes.left_out``): every row counted
    # here is a step of ExecuTorch, of today's suite or of an older one.
    counted = [c for c in steps if c.benchmark in charted or c.benchmark == catalogue.PROBE_FAILED.name]
    return Upstream(commits, recorded, {**data.release_names, **tags}, counted)


def load_step_limits(data: SiteData) -> list[StepLimit]:
    """Step limits of the runtime rows (:func:`vkbench.site.runtime_rows.runtime_rows`); device, tracer:
    the machine's name."""
    limits = []
    for row in data.runtime_rows:
        match = re.match(r"(?P<device>.+?)-tracer-(?P<tracer>on|off)$", row["machine"])
        device, tracer = (match["device"], match["tracer"]) if match else (row["machine"], "")
        for runner, limit in row["limits"].items():
            limits.append(StepLimit(device, tracer, runner, int(limit["limit"]), int(limit["cap"])))
    return sorted(limits, key=lambda s: (s.device, s.runner, s.tracer))


def load_ladder(data: SiteData) -> tuple[list[str], list[list[str]]]:
    """The ladder table of :func:`vkbench.site.runtime_page.ladder_table` over the runtime rows."""
    return ladder_table(data.runtime_rows)
