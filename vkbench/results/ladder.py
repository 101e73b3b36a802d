"""The runtime ladder as recorded: its rungs, the benchmarks that record it, and how a value reads.

A ladder benchmark (params: entry or ``probe/<name>`` x runner) stores the rungs a workload missed:
0 = its output matches eager PyTorch ... 4 = it did not lower. Execution writes these values
(:mod:`vkbench.execution.outcome`); the bug list and the runtime page read them; this module is the
one place that knows both the rung names and the encoding.
"""

from __future__ import annotations

from vkbench.results.model import ResultSet
from vkbench.suite import catalogue

#: The rungs, in order: what an outcome's ``reached`` can be (``""``: not even lowered).
LADDER = ("lowered", "loads", "runs", "matches")
#: Rungs missed -> the rung reached (the ladder, top first; 4 missed: not lowered).
RUNGS = (*reversed(LADDER), "not lowered")
#: asv's ladder benchmarks (params: entry or ``probe/<name>`` x runner).
LADDERS = (catalogue.POLICY_LADDER, catalogue.VLA_LADDER, catalogue.PROBE_LADDER)


def rung_name(missed: float) -> str:
    """The rung reached, from a recorded value (rungs missed; asv stores it as a float)."""
    return RUNGS[int(missed)]


def rungs_reached(releases: ResultSet) -> dict[str, dict[str, str]]:
    """``entry (or probe/<name>) -> "machine (runner)" -> rung reached`` over the release results."""
    found: dict[str, dict[str, str]] = {}
    for record in releases.files:
        for benchmark in LADDERS:
            for point in record.points(benchmark.name):
                if point.value is not None:
                    entry, runner = point.params
                    found.setdefault(entry, {})[f"{record.machine} ({runner})"] = rung_name(point.value)
    return found
