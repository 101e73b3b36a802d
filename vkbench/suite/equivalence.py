"""Keeping an asv series across a change of vkbench's own code, by evidence.

A benchmark's asv ``version`` is a digest of the vkbench files its records read
(:mod:`vkbench.suite.identity`), so any edit of one of them starts a new series: asv stops comparing,
and ``vkbench changes`` leaves every step across it out. When the edit cannot change what is
measured (a rename, a refactor, a new helper), that throws away the recorded history for nothing.

An :class:`Equivalence` is the evidence that it did not: the changed module's count tracks
re-measured under the new code on reference commits (the range's first and last classes and the
classes of its events), every value equal to the one recorded under the old digest. It names the
classes it keeps (all their counts equal) and those it restarts (a value changed, or nothing of
theirs was counted). A kept class's ``version`` stays the old digest (:func:`kept_version`), so
asv's own graphs and ``vkbench changes`` go on comparing it; a restarted one gets the new digest.

The records live in :data:`PATH` (read and written only here); that file is not part of any
digest, so adding a record changes no version but the ones it keeps. ``vkbench suite equivalence``
(:mod:`vkbench.runs.equivalence_run`) measures and writes them.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vkbench.paths import RESULTS_ROOT
from vkbench.suite.documents import read_document, write_document

SCHEMA = 1
#: Where the records live.
PATH = RESULTS_ROOT / "history" / "suite-equivalence.json"


@dataclass
class Equivalence:
    """Module ``module``'s suite went from digest ``old`` to ``new``; ``kept`` classes measured equal."""

    module: str  #: ``bench_probes``
    old: str  #: the asv version recorded before (``suite-…``)
    new: str  #: the digest of the changed code
    kept: list[str]  #: classes whose every re-measured count equals the recorded one
    restarted: list[str]  #: classes with a changed value, or none counted: a new series
    commits: list[str]  #: the reference commits re-measured
    #: ``benchmark -> commit -> [recorded values, re-measured values]`` (asv's grid order)
    values: dict[str, dict[str, list[list[Any]]]] = field(default_factory=dict)
    measured_with: str = ""  #: the command, machine and stack of the re-measurement
    date: str = ""
    #: ``benchmark -> [asv names]`` of points the recorded grid did not have (a new probe): their
    #: series begin under the kept version; nothing recorded is compared with them.
    added: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"module": self.module, "old": self.old, "new": self.new, "kept": self.kept,
                "restarted": self.restarted, "commits": self.commits, "values": self.values,
                "measured_with": self.measured_with, "date": self.date,
                **({"added": self.added} if self.added else {})}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Equivalence:
        return cls(str(data["module"]), str(data["old"]), str(data["new"]), [str(c) for c in data["kept"]],
                   [str(c) for c in data["restarted"]], [str(c) for c in data["commits"]],
                   dict(data.get("values") or {}), str(data.get("measured_with") or ""),
                   str(data.get("date") or ""),
                   {str(b): [str(p) for p in points] for b, points in (data.get("added") or {}).items()})

    def contradictions(self) -> list[str]:
        """Kept classes whose stored values are not all equal: a record that says more than its
        evidence (empty for a sound record)."""
        bad = []
        for benchmark, commits in self.values.items():
            cls = benchmark.split(".")[1]
            if cls in self.kept and any(recorded != measured for recorded, measured in commits.values()):
                bad.append(benchmark)
        kept_measured = {b.split(".")[1] for b in self.values}
        bad += [f"{cls}: kept without a value" for cls in self.kept if cls not in kept_measured]
        return bad


def parse(data: dict[str, Any]) -> list[Equivalence]:
    if data.get("vkbench_suite_equivalence") != SCHEMA:
        raise ValueError(f"not a vkbench suite-equivalence file (vkbench_suite_equivalence != {SCHEMA})")
    return [Equivalence.from_json(record) for record in data["records"]]


def read(path: Path = PATH) -> list[Equivalence]:
    """The stored records (none when the file does not exist); ``ValueError`` names a bad file."""
    if not Path(path).exists():
        return []
    return read_document(path, parse)


def write(records: list[Equivalence], path: Path = PATH) -> Path:
    return write_document(path, {"vkbench_suite_equivalence": SCHEMA,
                                 "records": [record.to_json() for record in records]})


@functools.cache
def stored() -> tuple[Equivalence, ...]:
    """The committed records, read once per process; none (said once on stderr) when unreadable."""
    try:
        return tuple(read(PATH))
    except ValueError as error:
        print(f"vkbench: {error}; no series is kept across a suite change", file=sys.stderr)
        return ()


def kept_version(module: str, cls: str | None, version: str,
                 records: tuple[Equivalence, ...] | list[Equivalence] | None = None) -> str:
    """The asv version of class ``cls`` of ``module`` (None: the module's own ``version``) whose
    code digests to ``version``: the oldest digest a chain of records keeps it under, else
    ``version`` itself. A module-level version is kept only by a record that restarts nothing."""
    records = stored() if records is None else records
    seen = {version}
    while True:
        older = next((r.old for r in records if r.module == module and r.new == version
                      and (cls in r.kept if cls is not None else not r.restarted)), None)
        if older is None or older in seen:
            return version
        seen.add(older)
        version = older


def canonical(benchmark: str, version: str | None,
              records: tuple[Equivalence, ...] | list[Equivalence] | None = None) -> str | None:
    """A stored asv ``version`` of ``benchmark`` (``module.Class.method``) as the series it belongs
    to: a result recorded under a digest some record keeps reads as the kept (older) one."""
    if not version:
        return version
    module, cls = (benchmark.split(".") + ["", ""])[:2]
    return kept_version(module, cls, version, records)
