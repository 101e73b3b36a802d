"""The counted partitioner work along the main line: every step of ``PartitionWork``, whatever its size.

``vkbench changes`` reports a step of ``bench_partition.PartitionWork.track_partition_events`` only
above its 2 % tolerance, as the gate reads it. This module answers the question under that rule:
*which commits changed the partitioner's work at all?* It walks the main line's recorded commits in
class order (:func:`vkbench.results.changes.lines`), keeps those whose ``bench_partition`` version is
one suite digest (steps across two suites are vkbench's own), and lists each change of any
``(blocks, phase)`` count between neighbouring records, with the lowering inputs the classes in
between changed (``history/classes-gate.json``), so a reader can check that each step sits on a commit
that touched partitioner code. The count's own noise (2 events in 3.0 M under load,
``docs/suite.md``) is shown, not hidden: ``noise`` marks steps within :data:`NOISE_EVENTS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vkbench.commits.classes import Classes
from vkbench.results.changes import lines
from vkbench.results.model import ResultSet
from vkbench.suite import catalogue
from vkbench.suite.identity import carries_digest

#: A step of at most this many events is within the count's measured run-to-run spread (docs/suite.md).
NOISE_EVENTS = 2


@dataclass
class WorkStep:
    """The counted work of one commit against the previous record of the same suite."""

    commit: str  #: the recorded commit after the step
    previous: str
    first_class: int  #: classes after ``previous``'s up to ``commit``'s (one when adjacent)
    last_class: int
    subjects: list[str]  #: the first commit subject of each class in between
    changed: list[str]  #: lowering inputs those classes changed
    deltas: dict[str, dict[str, float]] = field(default_factory=dict)  #: blocks -> phase -> events
    totals_before: dict[str, float] = field(default_factory=dict)  #: blocks -> ``total`` at ``previous``

    def share(self, blocks: str) -> float:
        """The step of ``total`` at ``blocks`` as a fraction of the total before it."""
        before = self.totals_before.get(blocks)
        return self.deltas[blocks].get("total", 0.0) / before if before else 0.0

    @property
    def noise(self) -> bool:
        return all(abs(d) <= NOISE_EVENTS for phases in self.deltas.values() for d in phases.values())

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "previous": self.previous,
                "classes": [self.first_class, self.last_class], "subjects": self.subjects,
                "changed": self.changed, "deltas": self.deltas, "totals_before": self.totals_before,
                "noise": self.noise}


@dataclass
class WorkHistory:
    """Counted work per recorded main-line commit of one suite, and its steps."""

    suite: str
    commits: list[str]  #: recorded commits of that suite, in class order
    totals: dict[str, list[float | None]]  #: blocks -> the ``total`` count per commit
    steps: list[WorkStep]

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "commits": self.commits, "totals": self.totals,
                "steps": [s.to_json() for s in self.steps]}


def work_history(found: ResultSet, classes: Classes, suite: str | None = None) -> WorkHistory:
    """The work counts of ``suite`` (default: the digest most main-line records carry) and their steps."""
    name = catalogue.PARTITION_EVENTS.name
    position = {c: i for i, k in enumerate(classes.classes) for c in k.commits}
    main = [f for f in lines(found, classes).get("main", []) if f.values(name)]
    if suite is None:
        digests = [f.version(name) for f in main if carries_digest(f.version(name))]
        suite = max(set(digests), key=digests.count) if digests else ""
    mine = [f for f in main if f.version(name) == suite]
    blocks = sorted({str(p[0]) for f in mine for p in f.values(name)}, key=float)
    totals = {b: [f.values(name).get((b, "total")) for f in mine] for b in blocks}
    steps = []
    for previous, current in zip(mine, mine[1:], strict=False):
        before, after = previous.values(name), current.values(name)
        deltas: dict[str, dict[str, float]] = {}
        for params in sorted(set(before) & set(after)):
            old, new = before[params], after[params]
            if old is not None and new is not None and new != old:
                deltas.setdefault(str(params[0]), {})[str(params[1])] = new - old
        if not deltas:
            continue
        first, last = position[previous.commit] + 1, position[current.commit]
        between = classes.classes[first:last + 1]
        changed = sorted({path for k in between for path in k.changed})
        at_previous = {b: float(v) for b in deltas if (v := before.get((b, "total"))) is not None}
        steps.append(WorkStep(current.commit, previous.commit, first, last, [k.subject for k in between],
                              changed, deltas, at_previous))
    return WorkHistory(suite, [f.commit for f in mine], totals, steps)
