"""``vkbench gate BASE HEAD``: the verdict on one change, measured on both sides and re-measured.

Two asv processes side by side (:mod:`vkbench.runs.lanes`) measure BASE and HEAD with the tracks
meant to be compared (:data:`vkbench.suite.tiers.COMPARED`: exact counts only, nothing that depends on
load or on a cache) into a scratch results directory, through the ``vkbench upstream`` machinery (the
mirror or a local repository, the aot build); :func:`vkbench.results.verdict.compare` judges the two files.
Any failing row is measured again (both sides again, in fresh processes) and is reported
as confirmed only where the second run gives the same values; the exit status is 1 only for a
confirmed one. Nothing recorded is written.
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from vkbench.results import verdict
from vkbench.results.confirmations import asv_name
from vkbench.results.model import ResultFile, ResultSet
from vkbench.runs import benchmark_split
from vkbench.runs.lanes import run_lanes
from vkbench.suite.tiers import COMPARED


@dataclass
class Verdict:
    """What ``vkbench gate`` found: the rows (failing ones re-measured) and the runs behind them."""

    base: str
    head: str
    rows: list[verdict.Row]
    compared: int
    runs: list[str] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)

    @property
    def confirmed(self) -> list[verdict.Row]:
        return [row for row in verdict.failing(self.rows) if row.confirmed]

    @property
    def exit_status(self) -> int:
        return 1 if self.confirmed else 0


class GateError(RuntimeError):
    """A side could not be measured (asv failed, a commit unknown): one line, exit 2."""


def _side(found: ResultSet, commit: str, log: Path) -> ResultFile:
    files = [f for f in found.files if f.commit.startswith(commit) or commit.startswith(f.commit)]
    if not files:
        tail = log.read_text().strip().splitlines()[-3:] if log.is_file() else []
        raise GateError(f"asv recorded nothing for {commit[:12]}: {' / '.join(tail) or 'no output'}")
    return files[0]


def _measure(source: Path, config: Path, machine: str, base: str, head: str, pattern: str, scratch: Path,
             env: Mapping[str, str] | None) -> tuple[ResultFile, ResultFile, list[str], list[int]]:
    """BASE and HEAD measured side by side (one asv process each, environments of their own)."""
    found, commands, codes = run_lanes(source, config, [[base], [head]], machine, scratch, pattern, env)
    return (_side(found[0], base, scratch / "lane-0.log"), _side(found[1], head, scratch / "lane-1.log"),
            commands, codes)


def gate(source: Path, config: Path, base: str, head: str, machine: str = "vkbench-gate",
         env: Mapping[str, str] | None = None, factor: float = verdict.FACTOR,
         pattern: str = COMPARED) -> Verdict:
    """Measure, judge, re-measure what fails; ``source`` is the mirror or a local repository."""
    with tempfile.TemporaryDirectory(prefix="vkbench-gate-") as tmp:
        before, after, commands, codes = _measure(source, config, machine, base, head, pattern,
                                                  Path(tmp) / "first", env)
        names = [name for name in after.results if name in before.results
                 and (re.search(pattern, name) or any(re.search(pattern, asv_name(name, ", ".join(p)))
                                                      for p in after.values(name)))]
        rows = verdict.compare(before, after, names, factor)
        result = Verdict(base, head, rows, sum(len(after.values(n)) for n in names), commands, codes)
        suspects = verdict.failing(rows)
        if suspects:  # both sides again, in fresh processes: only what selects a suspect
            before2, after2, commands2, codes2 = _measure(source, config, machine, base, head,
                                                          again(pattern, suspects), Path(tmp) / "again", env)
            result.runs += commands2
            result.codes += codes2
            repeated = {row.key: row for row in verdict.compare(before2, after2, names, factor)}
            for row in suspects:
                twin = repeated.get(row.key)
                row.confirmed = twin is not None and (twin.before, twin.after) == (row.before, row.after)
    return result


def again(pattern: str, suspects: list[verdict.Row]) -> str:
    """The alternatives of ``pattern`` that select a suspect row: what is measured again. A net phase's
    other phases are points of the same benchmark, so they come along; a changed partitioning's row
    is confirmed by its own counts."""
    kept = [alternative for alternative in benchmark_split.alternatives(pattern)
            if any(re.search(alternative, asv_name(row.benchmark, row.point)) for row in suspects)]
    return "|".join(kept) or pattern


def selection(policies: bool) -> str:
    """What is compared: :data:`COMPARED`, without the fast policies' coverage unless ``policies`` (their
    records take ~2.5 min a side on 2 cores; the daily recording compares them)."""
    if policies:
        return COMPARED
    kept = benchmark_split.alternatives(COMPARED)
    return "|".join(a for a in kept if not a.startswith(r"^bench_policies\."))


def repro(base: str, head: str, source: Path, mirror: bool) -> str:
    where = f"--mirror {source}" if mirror else f"--repo {source}"
    return f"vkbench gate {base} {head} {where}"


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
