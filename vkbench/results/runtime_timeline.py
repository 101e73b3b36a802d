"""The Vulkan runtime over upstream commits, per runtime machine: rungs, step limits, and their steps.

A runtime record of an upstream commit (``results/upstream/<machine>/``, recorded with a Vulkan build
of that commit) answers every commit of its *runtime class* (``results/history/classes-runtime.json``:
runs of first-parent commits whose runtime build inputs are identical), as a lowering record answers
its lowering class. So the runtime's history is told per machine (a lavapipe build and an H100 never
share a line: the device is part of the answer), its commits in first-parent order (the runtime classes,
the range's base first), each labelled with its runtime class.

:func:`timelines` is what the runtime page draws: each ladder point's rung (and the stored error line
that says why it stopped) and the step limits over those commits. :func:`runtime_steps` is what the
changes table adds to the lowering's steps: a ladder point whose rung differs between two neighbouring
recorded commits of one machine is a :class:`~vkbench.results.changes.Change` built exactly as a
lowering step is (exact on the first commit of the later runtime class when the two sit in adjacent
classes, the stored error line as its reason), so :mod:`vkbench.results.events` tells it as an event
with no second machinery. Neighbours of two suites, or of an older one, are left out and counted, as
for the lowering. Commits outside the classified range (releases) are drawn but never compared:
they are off the first-parent line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from vkbench.commits.classes import Classes
from vkbench.results.changes import Change, LeftOut, PointStep, _merge, _reason, compared, points_pattern
from vkbench.results.ladder import LADDERS, rung_name
from vkbench.results.model import ResultFile, ResultSet
from vkbench.suite import catalogue

#: What the runtime page draws over commits beside the ladders (params: runner; n x runner).
LIMIT_TRACKS = (catalogue.STEP_LIMIT, catalogue.MANY_PER_DISPATCH)
#: The benchmarks that make a machine a runtime machine (a lowering machine records none of them).
RUNTIME_TRACKS = (*LADDERS, *LIMIT_TRACKS)


@dataclass(frozen=True)
class Column:
    """One recorded commit of a runtime machine, where it sits on the first-parent line."""

    commit: str  #: the full hash
    #: Its runtime class's position (``-1``: the range's base; None: outside the classified range).
    runtime_class: int | None
    subject: str = ""  #: its class's first commit's subject, when it is that first commit

    @property
    def label(self) -> str:
        """``cff6f4dd, runtime class 52`` (or ``range base`` / ``not in the runtime classes``)."""
        where = ("not in the runtime classes" if self.runtime_class is None else
                 "range base" if self.runtime_class < 0 else f"runtime class {self.runtime_class}")
        return f"{self.commit[:8]}, {where}"


@dataclass(frozen=True)
class Rung:
    """One ladder point at one commit: the rung reached and, when it stopped short, why (stored line)."""

    missed: int  #: rungs missed, as asv stores it (0: matches ... 4: not lowered)
    reason: str = ""  #: ``stage: error line`` from the sidecar ("" when none was stored)

    @property
    def name(self) -> str:
        return rung_name(self.missed)


@dataclass
class MachineTimeline:
    """One runtime machine's record over the upstream commits it holds, in first-parent order."""

    machine: str
    columns: list[Column]
    #: (benchmark, entry or ``probe/<name>``, runner) -> commit -> rung (n/a points left out).
    rungs: dict[tuple[str, str, str], dict[str, Rung]] = field(default_factory=dict)
    #: runner -> commit -> ``track_steps_short_of_cap`` (the limit is the cap minus it).
    short_of_cap: dict[str, dict[str, float]] = field(default_factory=dict)
    #: (runner, n) -> commit -> µs per dispatch of ``Many(n)``.
    per_dispatch: dict[tuple[str, int], dict[str, float]] = field(default_factory=dict)
    records: dict[str, ResultFile] = field(default_factory=dict)  #: commit -> its record (files merged)

    def main_line(self) -> list[Column]:
        """The columns on the first-parent line (the range's base included), in order."""
        return [c for c in self.columns if c.runtime_class is not None]

    def steps(self) -> list[tuple[tuple[str, str, str], Column, Column]]:
        """``(point, previous, current)`` for every rung that differs between two neighbouring recorded
        commits of the first-parent line (two records of one runtime class are never compared: their
        build inputs are identical)."""
        order, found = self.main_line(), []
        for key, by_commit in sorted(self.rungs.items()):
            held = [c for c in order if c.commit in by_commit]
            found += [(key, previous, current) for previous, current in zip(held, held[1:], strict=False)
                      if previous.runtime_class != current.runtime_class
                      and by_commit[previous.commit].missed != by_commit[current.commit].missed]
        return found


def _holds_runtime(record: ResultFile) -> bool:
    return any(p.value is not None for b in RUNTIME_TRACKS for p in record.points(b.name))


def _columns(records: dict[str, ResultFile], classes: Classes | None) -> list[Column]:
    """The recorded commits in first-parent order: classified ones by class (and position inside it),
    the range's base first, then the others by date."""
    position = {c: (i, j) for i, k in enumerate(classes.classes) for j, c in enumerate(k.commits)} \
        if classes else {}
    firsts = {k.first: k.subject for k in classes.classes} if classes else {}
    base = classes.range.split("..")[0] if classes else ""

    def place(commit: str) -> tuple[int, int] | None:
        if commit in position:
            return position[commit]
        return (-1, 0) if base and commit.startswith(base) else None

    places = {c: place(c) for c in records}
    placed = sorted((where, c) for c, where in places.items() if where is not None)
    others = sorted((c for c, where in places.items() if where is None), key=lambda c: (records[c].date, c))
    return [Column(c, where[0], firsts.get(c, "")) for where, c in placed] + [Column(c, None) for c in others]


def timelines(found: ResultSet, classes: Classes | None) -> list[MachineTimeline]:
    """One timeline per machine of ``found`` (``results/upstream``) that recorded a runtime value;
    ``classes`` are the runtime classes of the range (None: every commit is off the line)."""
    by_machine: dict[str, dict[str, list[ResultFile]]] = {}
    for record in found.files:
        if _holds_runtime(record):
            by_machine.setdefault(record.machine, {}).setdefault(record.commit, []).append(record)
    out = []
    for machine in sorted(by_machine):
        records = {commit: _merge(files) for commit, files in by_machine[machine].items()}
        timeline = MachineTimeline(machine, _columns(records, classes), records=records)
        for commit, record in records.items():
            _read(timeline, commit, record)
        out.append(timeline)
    return out


def _read(timeline: MachineTimeline, commit: str, record: ResultFile) -> None:
    for bench in LADDERS:
        for point in record.points(bench.name):
            if point.value is None or len(point.params) != 2:
                continue  # n/a (no runner here) is not a rung
            entry, runner = point.params
            reason = _reason(record.failure(bench.name, point.params)) if point.value else ""
            rungs = timeline.rungs.setdefault((bench.name, entry, runner), {})
            rungs[commit] = Rung(int(point.value), reason)
    for point in record.points(catalogue.STEP_LIMIT.name):
        if point.value is not None and len(point.params) == 1:
            timeline.short_of_cap.setdefault(point.params[0], {})[commit] = point.value
    for point in record.points(catalogue.MANY_PER_DISPATCH.name):
        if point.value is not None and len(point.params) == 2:
            n, runner = point.params
            timeline.per_dispatch.setdefault((runner, int(n)), {})[commit] = point.value


def runtime_steps(found: ResultSet, classes: Classes | None) -> tuple[list[Change], list[LeftOut]]:
    """Every rung step of every runtime machine (:meth:`MachineTimeline.steps`) as changes-table rows (one
    suite digest on both sides) and the steps left out (two suites, or an older one), decided as the
    lowering's are (:func:`vkbench.results.changes.compared`)."""
    rows: list[Change] = []
    left_out: list[LeftOut] = []
    benches = {b.name: b for b in LADDERS}
    for timeline in timelines(found, classes):
        for (name, entry, runner), previous, current in timeline.steps():
            bench, param = benches[name], f"{entry}, {runner}"
            by_commit = timeline.rungs[(name, entry, runner)]
            before, after = by_commit[previous.commit], by_commit[current.commit]
            old, new = timeline.records[previous.commit], timeline.records[current.commit]
            assert classes and previous.runtime_class is not None and current.runtime_class is not None
            exact = current.runtime_class == previous.runtime_class + 1  # the range's base is -1
            cause = classes.classes[current.runtime_class]
            found = compared(PointStep("main", bench, param, (before.missed, before.reason),
                                       (after.missed, after.reason), old, new, cause, exact))
            if isinstance(found, LeftOut):
                left_out.append(found)
                continue
            found.machine = timeline.machine
            found.repro = runtime_repro([found])
            rows.append(found)
    return rows, left_out


def runtime_repro(rows: list[Change]) -> str:
    """How to re-measure runtime steps: ``history confirm``'s ``aot`` build has no Vulkan runtime, so
    each side is recorded with its own ``vkbench build full`` venv on the step's machine."""
    parts = []
    for machine in sorted({r.machine for r in rows}):
        mine = [r for r in rows if r.machine == machine]
        pattern = points_pattern([(r.benchmark, r.param) for r in mine])
        head = mine[0]
        base = f"{head.commit[:8]}^" if head.exact else head.previous[:8]
        tracer = re.search(r"-tracer-(on|off)$", machine)
        build = f"vkbench build full CHECKOUT_AT_SHA --out VENV{f' --tracer {tracer[1]}' if tracer else ''}"
        parts.append(f"for SHA in {base} {head.commit[:8]}: {build} && vkbench upstream --mirror MIRROR "
                     f"-- run -E existing:VENV/bin/python --set-commit-hash SHA --machine {machine} "
                     f"-b \"{pattern}\"")
    return "; ".join(parts)
