"""The changes table: every step of a count across the recorded range, on the commit that caused it.

Recorded commits are put on their lines of history: the main line in the
order of its classes (:mod:`vkbench.commits.classes`, runs of commits with
identical lowering inputs); the release tags in version order, going on
into the main commits recorded after the newest of them (a release branch
leaves main, so its steps are ranges, never exact; two main commits there are
compared by the main line only, so no step is told twice); anything else in
commit-date order. Between two neighbours on a line, every count
that differs is a row; a failure is the value ``"failed"`` (asv stores
NaN; its stage and first error line come from the file's sidecar). When the
two neighbours sit in adjacent classes, the step happened at the first
commit of the later class, exactly; otherwise the row names the range.

Rows are regressions first (a count up, or a failure appearing), then
improvements. A timing step (where ``asv continuous -f 1.4`` would flag it) is a row only where the
deterministic partitioner-work track (:data:`DETERMINISTIC`, its own steps rows of more than 2 %) moves
the same way at the same commit in the same size, or where a stored interleaved re-measurement
confirms it; otherwise it is left out (:data:`TIMING_NOT_CONFIRMED`). A row whose stored
re-measurement (:mod:`vkbench.results.confirmations`) did not reproduce is dropped and counted.
Every row carries the ``vkbench upstream`` command that reproduces it; :mod:`vkbench.results.events`
tells the rows as one event per commit. The runtime ladders' rungs step per machine along the runtime
classes instead (:mod:`vkbench.results.runtime_timeline`); their rows come in as ``extra`` and are
told, confirmed and sorted as these are.

A step is an upstream change only when both sides were recorded by one suite: the benchmark's
stored asv ``version`` is the same suite digest on both (:mod:`vkbench.suite.identity`, the
vkbench code the record runs). Two neighbours whose versions differ are never compared (asv
would not compare them either); the step is left out and counted (:data:`SUITE_CHANGED`).
Records made before the digest existed carry asv's hash of the benchmark's own source, which
misses vkbench's code: their steps are rows of an *older suite* (re-record to confirm), and where
the provenance tells that one side was recorded by a vkbench that stored none, the suite did
change in between (e.g. the non-Core-ATen retry), and the step is left out
(:data:`OLDER_SUITE_CHANGED`).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from vkbench.commits.classes import Classes, CommitClass
from vkbench.results.confirmations import (
    EVENTS_TOLERANCE,
    TIMING_FACTOR,
    Confirmation,
    Step,
    StepKey,
    Stored,
    asv_name,
    lookup,
    settled,
)
from vkbench.results.ladder import LADDERS, rung_name
from vkbench.results.model import CpuOps, Failure, ResultFile, ResultSet, Sidecar
from vkbench.suite import catalogue
from vkbench.suite.equivalence import canonical
from vkbench.suite.identity import carries_digest

#: Count tracks whose steps are rows.
COUNTS = tuple(bench for _, bench in catalogue.COUNT_TRACKS)
#: A workload's failure is told once, by one track of its class: a probe's by ``ProbeFailure``
#: (0 -> 1, recorded even by runs that select only it, as a bisection does), a policy's by its
#: CPU-op count going to ``"failed"``.
TOLD_BY = {catalogue.PROBE_CPU_OPS.class_name: catalogue.PROBE_FAILED,
           catalogue.PROBE_FAILED.class_name: catalogue.PROBE_FAILED,
           catalogue.POLICY_CPU_OPS.class_name: catalogue.POLICY_CPU_OPS,
           catalogue.VLA_CPU_OPS.class_name: catalogue.VLA_CPU_OPS}
TIMINGS = (catalogue.PARTITION_TIME,)
#: The runtime ladders: their steps come from :mod:`vkbench.results.runtime_timeline` (per machine).
LADDER_NAMES = frozenset(b.name for b in LADDERS)
#: Deterministic work counts: count-like rows, a step when after/before moves by more than
#: :data:`~vkbench.results.confirmations.EVENTS_TOLERANCE`; what a timing step needs beside it.
DETERMINISTIC = (catalogue.PARTITION_EVENTS,)
#: The timing each deterministic track vouches for (same commit, same blocks size).
VOUCHES_FOR = {catalogue.PARTITION_TIME.name: catalogue.PARTITION_EVENTS.name}
FAILED = "failed"
#: ``Change.suite`` of a row both of whose sides carry one suite digest: an upstream change.
SAME = "same"
#: ``Change.suite`` of a row recorded before the digest existed (asv's source hash on both sides).
OLDER = "older"
#: Why a step is left out: the two sides' asv versions differ (the suite changed in between).
SUITE_CHANGED = "suite changed"
#: Why a step is left out: older records, one written by a vkbench that stored its provenance and
#: the other by one that did not (the suite changed in between; the rows once flagged "suite may differ").
OLDER_SUITE_CHANGED = "older suite changed"
#: Why a step is left out: a timing step that neither the deterministic work track (moving at the same
#: commit by at least 2 % in the same size) nor an interleaved re-measurement of both sides confirms.
TIMING_NOT_CONFIRMED = "timing not confirmed"
#: Why a step is left out: both sides were recorded by one older suite, before the digest existed; such
#: points are drawn as an older suite's, never compared (re-record both sides with today's suite).
OLDER_SUITE = "older suite"
LEFT_OUT_REASONS = (SUITE_CHANGED, OLDER_SUITE_CHANGED, OLDER_SUITE, TIMING_NOT_CONFIRMED)

Value = float | str  #: a number, or ``"failed"``
ReasonedValue = tuple[Value, str]  #: a value and the reason stored for it


@dataclass
class Change:
    """One step of one benchmark at one parameter between two neighbouring recorded commits."""

    benchmark: str
    param: str
    before: Value
    after: Value
    commit: str  #: the first commit of the class that caused it (exact), else the later recorded commit
    previous: str  #: the neighbour recorded before it
    exact: bool  #: ``commit`` is the cause (the neighbours are in adjacent classes)
    subject: str = ""
    pr: str | None = None
    files: list[str] = field(default_factory=list)  #: lowering inputs the class changed
    reason_before: str = ""
    reason_after: str = ""
    repro: str = ""
    line: str = "main"
    #: :data:`SAME` (one suite digest on both sides: an upstream change) or :data:`OLDER` (recorded
    #: before the digest existed: re-record both sides with today's suite to confirm it).
    suite: str = SAME
    recorded: str = ""  #: the recorded commit after the step (``commit`` is its class's first when exact)
    #: The commit of the event this row belongs to (:mod:`vkbench.results.events`): ``commit``, or for
    #: a release-line step, the main-line event it repeats.
    event: str = ""
    confirmed: bool | None = None  #: the stored re-measurement of both sides reproduced it (None: none)
    confirmation: Confirmation | None = None
    suite_before: str | None = None  #: the stored asv version of the benchmark on each side
    suite_after: str | None = None
    note: str = ""  #: what else vouches for it or where it could not be placed
    #: The runtime machine whose neighbouring records step (a ladder's rung,
    #: :mod:`vkbench.results.runtime_timeline`); "" for a lowering step, whose commits' files are merged.
    machine: str = ""

    @property
    def awaits_confirmation(self) -> bool:
        """One suite on both sides and no stored re-measurement yet."""
        return self.suite == SAME and self.confirmation is None

    @property
    def to_measure(self) -> bool:
        """What ``history confirm`` measures: a step awaiting confirmation, or one whose stored
        confirmation was made before its command and result files were kept (``not_kept``): measured
        again, so a reader can open what it rests on; the new one replaces it."""
        return self.suite == SAME and not settled(self.confirmation)

    @property
    def step(self) -> Step:
        """The step as :mod:`vkbench.results.confirmations` confirms it (the recorded commits)."""
        return Step(StepKey(self.benchmark, self.param, self.previous, self.recorded or self.commit,
                            self.machine), self.before, self.after, self.suite_after,
                    timing=self.benchmark in {b.name for b in TIMINGS})

    def values(self, arrow: str = "->") -> str:
        """``before -> after`` as a reader says it: a ladder's rungs by name (``loads -> matches``)."""
        if self.benchmark in LADDER_NAMES and FAILED not in (self.before, self.after):
            return f"{rung_name(float(self.before))} {arrow} {rung_name(float(self.after))}"
        return f"{self.before} {arrow} {self.after}"

    @property
    def fails(self) -> bool:
        """The step is the workload starting to fail (a count becomes "failed", or ProbeFailure 0 -> 1)."""
        if self.benchmark == catalogue.PROBE_FAILED.name:
            return self.after == 1
        return self.after == FAILED and self.before != FAILED

    @property
    def regression(self) -> bool:
        if self.after == FAILED:
            return self.before != FAILED
        if self.before == FAILED:
            return False
        return float(self.after) > float(self.before)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "regression": self.regression}


@dataclass
class LeftOut:
    """A step between two neighbours that is not a row: their suites differ (``why``)."""

    benchmark: str
    param: str
    before: Value
    after: Value
    previous: str
    commit: str
    line: str
    why: str  #: one of :data:`LEFT_OUT_REASONS`
    suite_before: str | None = None
    suite_after: str | None = None

    @property
    def step(self) -> Step:
        return Step(StepKey(self.benchmark, self.param, self.previous, self.commit), self.before, self.after,
                    self.suite_after, timing=self.benchmark in {b.name for b in TIMINGS})


@dataclass
class Event:
    """One commit's story (:mod:`vkbench.results.events`): every row stepping there, the reasons once,
    the confirmation and one command reproducing them all."""

    commit: str
    previous: str  #: the recorded neighbour before it (a range when not ``exact``)
    exact: bool
    line: str
    subject: str
    pr: str | None
    files: list[str]  #: the lowering inputs its class changed
    rows: list[Change]
    reasons: list[str]  #: each distinct reason once (partitioner reasons of counts, failure lines)
    confirmation: str  #: what the stored re-measurements say of its rows
    repro: str
    #: Release-line steps that repeat this main-line event (``previous..commit`` of the tags).
    repeated_on: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  #: e.g. "not placed: record main-line commits ..."

    @property
    def regression(self) -> bool:
        return any(r.regression for r in self.rows)

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "previous": self.previous, "exact": self.exact, "line": self.line,
                "subject": self.subject, "pr": self.pr, "files": self.files, "regression": self.regression,
                "steps": [{"benchmark": r.benchmark, "param": r.param, "before": r.before, "after": r.after,
                           "line": r.line, "previous": r.previous, "commit": r.commit,
                           "confirmed": r.confirmed, "machine": r.machine,
                           "evidence": r.confirmation.evidence() if r.confirmation else None}
                          for r in self.rows],
                "reasons": self.reasons, "confirmation": self.confirmation, "repro": self.repro,
                "repeated_on": self.repeated_on, "notes": self.notes}


@dataclass
class Changes:
    commits: list[dict[str, str | None]]  #: every commit of the classified range -> measured as
    changes: list[Change]  #: the rows: upstream changes first, then those of an older suite
    left_out: list[LeftOut] = field(default_factory=list)  #: steps not reported, and why
    dropped: list[Change] = field(default_factory=list)  #: steps whose re-measurement did not reproduce
    #: One per commit (:func:`vkbench.results.events.explain`).
    events: list[Event] = field(default_factory=list)

    @property
    def upstream(self) -> list[Change]:
        """Rows recorded by one suite on both sides: changes of ExecuTorch."""
        return [c for c in self.changes if c.suite == SAME]

    @property
    def older(self) -> list[Change]:
        """Rows recorded before the suite's digest existed: to confirm by re-recording both sides."""
        return [c for c in self.changes if c.suite == OLDER]

    def left_out_counts(self) -> dict[str, int]:
        """Steps left out per reason (every reason always present)."""
        return {why: sum(1 for step in self.left_out if step.why == why) for why in LEFT_OUT_REASONS}

    def steps_to_confirm(self) -> list[Step]:
        """What ``history confirm`` re-measures with asv: the rows of one suite (:attr:`Change.to_measure`)
        and the timing steps of one suite waiting for it (stored confirmations are matched by the caller).
        Runtime rows are :meth:`runtime_steps_to_confirm`: its ``aot`` build has no Vulkan runtime."""
        rows = [c.step for c in [*self.changes, *self.dropped] if c.to_measure and not c.machine]
        timings = [s.step for s in self.left_out if s.why == TIMING_NOT_CONFIRMED
                   and s.suite_before == s.suite_after and carries_digest(s.suite_after)]
        return rows + timings

    def runtime_steps_to_confirm(self) -> list[Step]:
        """The runtime rows waiting for a re-measurement (each key names its machine), each side on its
        own runtime (``history confirm --runners``, :mod:`vkbench.runs.confirm_runtime`)."""
        return [c.step for c in [*self.changes, *self.dropped] if c.to_measure and c.machine]

    def to_json(self) -> dict[str, Any]:
        return {"commits": self.commits, "changes": [c.to_json() for c in self.changes],
                "left_out": self.left_out_counts(), "left_out_steps": [asdict(s) for s in self.left_out],
                "dropped": len(self.dropped), "dropped_steps": [c.to_json() for c in self.dropped],
                "events": [e.to_json() for e in self.events]}


def _reason(failure: Failure | None) -> str:
    return f"{failure.stage}: {failure.error}" if failure else ""


def _ops_text(ops: CpuOps, names: list[str]) -> str:
    """``op ×nodes: reason; reason`` for each of ``names`` (the partitioner's reasons, as stored)."""
    parts = []
    for op in names:
        reasons = "; ".join(sorted(ops[op].get("reasons") or {})) or "no reason logged"
        parts.append(f"{op} ×{ops[op].get('nodes', 0)}: {reasons}")
    return " | ".join(parts)


def cpu_reasons(before: CpuOps | None, after: CpuOps | None) -> tuple[str, str]:
    """What explains a step in a count: the CPU ops that had more nodes before (with the
    partitioner's reasons then) and those that have more after (with its reasons now).

    ``("", "")`` when either side was recorded before vkbench kept CPU ops.
    """
    if before is None or after is None:
        return "", ""

    def nodes(ops: CpuOps, op: str) -> int:
        return int(ops.get(op, {}).get("nodes", 0))

    fewer = sorted(op for op in before if nodes(before, op) > nodes(after, op))
    more = sorted(op for op in after if nodes(after, op) > nodes(before, op))
    return _ops_text(before, fewer), _ops_text(after, more)


def lines(found: ResultSet, classes: Classes | None) -> dict[str, list[ResultFile]]:
    """Recorded files per line of history, each in its line's order (one file per commit)."""
    position = {c: i for i, k in enumerate(classes.classes) for c in k.commits} if classes else {}
    within = {c: j for k in (classes.classes if classes else []) for j, c in enumerate(k.commits)}
    by_commit: dict[str, list[ResultFile]] = {}
    for f in found.files:
        by_commit.setdefault(f.commit, []).append(f)
    out: dict[str, list[ResultFile]] = {"main": [], "releases": [], "other": []}
    for commit, files in by_commit.items():
        merged = _merge(files)
        if commit in position:
            out["main"].append(merged)
        elif merged.sidecar.provenance.release:
            out["releases"].append(merged)
        else:
            out["other"].append(merged)
    out["main"].sort(key=lambda f: (position[f.commit], within[f.commit]))
    out["releases"].sort(key=lambda f: tuple(int(x) for x in re.findall(r"\d+", f.sidecar.provenance.release
                                                                        or "")))
    out["other"].sort(key=lambda f: f.date)
    if out["releases"] and out["main"]:  # the newest release's line goes on into main after it
        newest = max(f.date for f in out["releases"])
        out["releases"] += sorted((f for f in out["main"] if f.date > newest), key=lambda f: f.date)
    return {name: files for name, files in out.items() if files}


def _merge(files: list[ResultFile]) -> ResultFile:
    """One commit's files (several machines or environments) read as one: the first holding a
    benchmark gives its row, with that file's pattern; the first holding a workload's CPU ops gives them."""
    if len(files) == 1:
        return files[0]
    first = files[0]
    merged = Sidecar(first.sidecar.provenance)
    results = {}
    for f in files:
        for name, result in f.results.items():
            if name not in results:
                results[name] = result
                if name in f.sidecar.patterns:
                    merged.patterns[name] = f.sidecar.patterns[name]
        for key, value in f.sidecar.failures.items():
            merged.failures.setdefault(key, value)
        for module, workloads in f.sidecar.cpu.items():
            for workload, ops in workloads.items():
                merged.cpu.setdefault(module, {}).setdefault(workload, ops)
    return ResultFile(first.path, first.machine, first.commit, first.date, first.env_name, results,
                      sidecar=merged)


def _points(record: ResultFile, benchmark: catalogue.Benchmark) -> dict[str, tuple[Value, str]]:
    """``param -> (value or "failed", reason)`` of a benchmark in one file (one-parameter tracks)."""
    out = {}
    for point in record.points(benchmark.name):
        if not point.params:
            continue
        value: Value = FAILED if point.value is None else point.value
        failure = point.failure
        if failure is None and benchmark == catalogue.PROBE_FAILED and point.value:
            failure = record.failure(benchmark.name, point.params)  # a failure recorded as the value 1
        out[", ".join(point.params)] = (value, _reason(failure))
    return out


def points_pattern(points: list[tuple[str, str]]) -> str:
    """An ``asv -b`` pattern selecting ``points`` (benchmark, param): asv's ``name(params)`` (strings
    quoted, numbers bare)."""
    names = sorted({re.escape(asv_name(b, p)) for b, p in points})
    pattern = "^" + names[0] if len(names) == 1 else "^(" + "|".join(names) + ")"
    return pattern + "$" if len(points) == 1 and not points[0][1] else pattern


def repro(points: list[tuple[str, str]], base: str, head: str) -> str:
    """The ``vkbench upstream … continuous`` command that re-measures ``points`` (benchmark, param) on
    both sides."""
    pattern = points_pattern(points)
    short = base[:8] + ("^" if base.endswith("^") else "")
    return (f"vkbench upstream --mirror MIRROR -- continuous -f {TIMING_FACTOR} -b \"{pattern}\" "
            f"{short} {head[:8]}")


def _repro(benchmark: str, param: str, base: str, head: str) -> str:
    return repro([(benchmark, param)], base, head)


def series(record: ResultFile, bench: catalogue.Benchmark) -> str | None:
    """The asv series ``bench``'s stored version belongs to: a digest an equivalence record keeps
    (the class re-measured equal after a change of vkbench's code) reads as the one it keeps."""
    return canonical(bench.name, record.version(bench.name))


def suite_of(bench: catalogue.Benchmark, previous: ResultFile, current: ResultFile) -> str:
    """:data:`SAME` or :data:`OLDER` when the two sides may be compared, else why not."""
    version = series(previous, bench)
    if version != series(current, bench):
        return SUITE_CHANGED
    if carries_digest(version):
        return SAME
    if previous.stamped(bench.name) != current.stamped(bench.name):
        return OLDER_SUITE_CHANGED
    return OLDER


@dataclass(frozen=True)
class PointStep:
    """One value of one point between two neighbouring records of a line: what :func:`compared` judges.
    ``cause`` is the class of commits ``current`` answers for (None off the main line); ``exact`` when
    it directly follows ``previous``'s class, so the step lands on the class's first commit."""

    line: str
    bench: catalogue.Benchmark
    param: str
    before: ReasonedValue
    after: ReasonedValue
    previous: ResultFile
    current: ResultFile
    cause: CommitClass | None = None
    exact: bool = False


def _row(step: PointStep, suite: str) -> Change:
    bench, cause, exact, previous, current = step.bench, step.cause, step.exact, step.previous, step.current
    commit = cause.first if (cause and exact) else current.commit
    base = f"{commit}^" if exact else previous.commit
    why_before, why_after = step.before[1], step.after[1]
    if FAILED not in (step.before[0], step.after[0]) and bench in COUNTS and bench != catalogue.PROBE_FAILED:
        why_before, why_after = cpu_reasons(previous.cpu(bench.name, step.param),
                                            current.cpu(bench.name, step.param))
    told = cause if cause and exact else None
    return Change(bench.name, step.param, _rounded(step.before[0]), _rounded(step.after[0]), commit,
                  previous.commit, exact, told.subject if told else "", told.pr if told else None,
                  list(told.changed) if told else [], why_before, why_after,
                  _repro(bench.name, step.param, base, commit), step.line, suite, recorded=current.commit,
                  event=commit, suite_before=previous.version(bench.name),
                  suite_after=current.version(bench.name))


def compared(step: PointStep) -> Change | LeftOut:
    """A step between two neighbours: a row when one suite digest recorded both sides, else the step
    left out with why (two suites; an older suite, whose points are drawn but never compared). The one
    decision for the lowering's steps and the runtime's (:mod:`vkbench.results.runtime_timeline`)."""
    suite = suite_of(step.bench, step.previous, step.current)
    if suite == SAME:
        return _row(step, suite)
    return LeftOut(step.bench.name, step.param, _rounded(step.before[0]), _rounded(step.after[0]),
                   step.previous.commit, step.current.commit, step.line,
                   OLDER_SUITE if suite == OLDER else suite, step.previous.version(step.bench.name),
                   step.current.version(step.bench.name))


def _is_step(bench: catalogue.Benchmark, before: Value, after: Value) -> bool:
    if before == after:
        return False
    if FAILED in (before, after):
        return TOLD_BY.get(bench.class_name) == bench  # a failure is told once, by this track
    if bench in TIMINGS:
        if not before or not after:
            return False
        ratio = float(after) / float(before)
        return not 1 / TIMING_FACTOR < ratio < TIMING_FACTOR
    if bench in DETERMINISTIC:
        return not before or abs(float(after) / float(before) - 1) > EVENTS_TOLERANCE
    return True


def _rounded(value: Value) -> Value:
    if isinstance(value, float) and not math.isnan(value) and value == int(value):
        return int(value)
    return round(value, 4) if isinstance(value, float) else value


def _vouched(row: Change, rows: list[Change]) -> Change | None:
    """The deterministic work row that vouches for timing ``row``: its track moved the same way by at
    least 2 % at the same commit (or between the same recorded neighbours) in the same blocks size."""
    track = VOUCHES_FOR.get(row.benchmark)
    for other in rows:
        if other.benchmark != track or other.line != row.line or other.regression != row.regression:
            continue
        same_place = other.commit == row.commit or (other.previous, other.recorded) == (row.previous,
                                                                                      row.recorded)
        if same_place and other.param.split(", ")[0] == row.param.split(", ")[0]:
            return other
    return None


def _confirm(rows: list[Change], confirmations: Stored | None) -> tuple[list[Change], list[Change],
                                                                        list[LeftOut]]:
    """Rows with their stored confirmations: ``(kept, dropped, timings left out)``. A row whose
    re-measurement did not reproduce is dropped; a timing row stays only where the deterministic work
    track vouches for it or its re-measurement reproduced it."""
    kept, dropped, left_out = [], [], []
    for row in rows:
        found = lookup(confirmations or {}, row.step)
        if found is not None:
            row.confirmed, row.confirmation = found.reproduced, found
            if not found.reproduced:
                dropped.append(row)
                continue
        if row.benchmark in VOUCHES_FOR and not row.confirmed:
            vouch = _vouched(row, rows)
            if vouch is None:
                left_out.append(LeftOut(row.benchmark, row.param, row.before, row.after, row.previous,
                                        row.recorded or row.commit, row.line, TIMING_NOT_CONFIRMED,
                                        row.suite_before, row.suite_after))
                continue
            row.note = f"{vouch.benchmark.rsplit('.', 1)[1]}({vouch.param}) {vouch.before} -> {vouch.after}"
        kept.append(row)
    return kept, dropped, left_out


def changes(found: ResultSet, classes: Classes | None = None, confirmations: Stored | None = None,
            extra: tuple[list[Change], list[LeftOut]] | None = None) -> Changes:
    """Every step across the recorded commits of ``found``; ``classes`` attributes them exactly;
    ``confirmations`` (:mod:`vkbench.results.confirmations`) mark the rows re-measured on both sides
    and drop those that did not reproduce. ``extra`` are steps found along another line (the runtime's,
    per machine: :func:`vkbench.results.runtime_timeline.runtime_steps`), confirmed and sorted with these.

    A point is compared with the same point at the previous commit of its line that recorded it
    with the same suite digest (a gate commit between two full-tier ones does not hide a VLA entry's
    step, and a class recorded by an older suite as well does not hide today's record of it). Points
    of an older suite are never compared: their steps are left out (:data:`OLDER_SUITE`), and so is a
    step between neighbours of two suites (:data:`SUITE_CHANGED`), as asv would.
    """
    index = {c: i for i, k in enumerate(classes.classes) for c in k.commits} if classes else {}
    rows: list[Change] = []
    left_out: list[LeftOut] = []

    def step(line: str, bench: catalogue.Benchmark, param: str, previous: ResultFile, before: ReasonedValue,
             current: ResultFile, after: ReasonedValue) -> None:
        if line == "main" and classes is not None and index[current.commit] == index[previous.commit]:
            return  # one class: the same lowering inputs
        if line == "releases" and previous.commit in index and current.commit in index:
            return  # two main commits on the release line's way into main: the main line compares them
        if not _is_step(bench, before[0], after[0]):
            return
        cause = classes.classes[index[current.commit]] if line == "main" and classes else None
        exact = cause is not None and index[current.commit] == index[previous.commit] + 1
        found = compared(PointStep(line, bench, param, before, after, previous, current, cause, exact))
        (rows if isinstance(found, Change) else left_out).append(found)

    for line, files in lines(found, classes).items():
        for bench in COUNTS + DETERMINISTIC + TIMINGS:
            last: dict[str, tuple[ResultFile, ReasonedValue]] = {}  # the neighbour, whatever its suite
            last_of_suite: dict[tuple[str, str | None], tuple[ResultFile, ReasonedValue]] = {}
            for current in files:
                version = series(current, bench)
                for param, point in _points(current, bench).items():
                    same = last_of_suite.get((param, version)) if carries_digest(version) else None
                    if same is not None:  # today's suite: compared across records of an older one
                        step(line, bench, param, *same, current, point)
                    elif param in last:  # an older suite, or two suites: left out and counted
                        step(line, bench, param, *last[param], current, point)
                    last[param] = last_of_suite[(param, version)] = (current, point)
    if extra is not None:
        rows, left_out = rows + extra[0], left_out + extra[1]
    rows, dropped, unconfirmed = _confirm(rows, confirmations)
    timings = {b.name for b in TIMINGS}
    rows.sort(key=lambda r: (not r.regression, r.suite != SAME, r.benchmark in timings, r.line != "main",
                             r.benchmark, r.param))
    return Changes(commits_measured_as(found, classes), rows, left_out + unconfirmed, dropped)


def commits_measured_as(found: ResultSet, classes: Classes | None) -> list[dict[str, str | None]]:
    """Every commit of the classified range with the recorded commit of its class (None: not yet)."""
    if classes is None:
        return [{"commit": f.commit, "measured_as": f.commit} for f in found.files]
    recorded = {f.commit for f in found.files}
    out = []
    for c in classes.classes:
        measured = next((m for m in c.commits if m in recorded), None)
        out += [{"commit": commit, "measured_as": measured} for commit in c.commits]
    return out
