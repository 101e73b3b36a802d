"""Bisect a step over the classes of a range: only first commits of classes are ever measured.

``asv find`` halves a range of commits; most of them cannot change a count
(their lowering inputs equal their neighbour's), so here the range is halved
over classes (:mod:`vkbench.commits.classes`) and each probe is an ``asv run``
of one class's first commit through :func:`vkbench.runs.upstream_asv.run`, with
the failure reasons and provenance that every recording stores. The answer
is the first class whose value differs from the good end's: its first
commit caused the step. Every measurement stays in the results, so the
bisection's own steps are history too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vkbench.commits.classes import Classes, CommitClass
from vkbench.results.asv_files import read_dir


@dataclass
class Probe:
    """The point a bisection follows: one benchmark at one parameter (as asv's ``-b`` selects it)."""

    benchmark: str
    param: str

    @property
    def pattern(self) -> str:
        """The benchmark's whole class: its ``setup_cache`` makes every value at once."""
        return "^" + re.escape(self.benchmark.rsplit(".", 1)[0]) + r"\."


def value_at(results: Path, commit: str, probe: Probe) -> float | None:
    """The recorded value of ``probe`` at ``commit`` (NaN: recorded, failed); None: not recorded."""
    for record in read_dir(results).files:
        if record.commit == commit and probe.benchmark in record.results:
            values = record.values(probe.benchmark)
            if (probe.param,) in values:
                found = values[(probe.param,)]
                return math.nan if found is None else found
    return None


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return (math.isnan(a) and math.isnan(b)) or a == b


def bisect(classes: Classes, good: int, bad: int, measure: Callable[[CommitClass], float | None],
           log: Callable[[str], None] = print) -> tuple[CommitClass, list[tuple[str, float | None]]]:
    """The first class in ``(good, bad]`` whose value differs from class ``good``'s.

    ``measure(class)`` returns the value recorded for any commit of the class, recording its
    first commit when none is. Returns the class and every ``(first commit, value)`` on the way.
    """
    steps = []
    reference = measure(classes.classes[good])
    steps.append((classes.classes[good].first, reference))
    end = measure(classes.classes[bad])
    steps.append((classes.classes[bad].first, end))
    if _same(reference, end):
        raise ValueError(f"no step: classes {good} and {bad} record the same value ({reference})")
    while bad - good > 1:
        middle = (good + bad) // 2
        value = measure(classes.classes[middle])
        steps.append((classes.classes[middle].first, value))
        log(f"class {middle} ({classes.classes[middle].first[:8]}): {value}")
        if _same(value, reference):
            good = middle
        else:
            bad = middle
    return classes.classes[bad], steps


def recorded_or_run(mirror: Path, machine: str, results: Path,
                    probe: Probe) -> Callable[[CommitClass], float | None]:
    """``measure`` for :func:`bisect`: a value recorded for any commit of the class (same inputs,
    same counts), else ``asv run`` of the class's first commit."""
    from vkbench.runs.upstream_asv import run

    def measure(commit_class: CommitClass) -> float | None:
        for commit in commit_class.commits:
            found = value_at(results, commit, probe)
            if found is not None:
                return found
        run(mirror, ["run", "-b", probe.pattern, f"{commit_class.first}^!"], machine)
        return value_at(results, commit_class.first, probe)

    return measure
