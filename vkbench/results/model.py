"""The results model: typed records of what asv (and vkbench beside it) stored for one commit.

asv 0.6 keeps one JSON file per machine x commit x environment, each
benchmark a row of ``result_columns`` and its values in the order of the
parameter product. Every figure that the CLI and the site show is read from
these records, built once by :mod:`vkbench.results.asv_files`, so the
column layout, the parameter product and asv's quoting of parameter values
are known in one place.

Beside each asv file vkbench keeps a *sidecar* (:class:`Sidecar`, written by
:mod:`vkbench.results.sidecar`): the tier and launch settings the file was
recorded under, its provenance (which vkbench, which base wheel, which
commit's measurement it stands for) and the reason for every failed point,
which asv's files only hold as NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: asv's per-benchmark statistics columns (kept for ``time_`` benchmarks).
STAT_COLUMNS = ("stats_ci_99_a", "stats_ci_99_b", "stats_q_25", "stats_q_75", "stats_number", "stats_repeat")

Params = tuple[str, ...]


def finite(value: Any) -> bool:
    """asv stores skipped or failed points as NaN or None; only numbers are values."""
    return isinstance(value, int | float) and not isinstance(value, bool) and not (
        isinstance(value, float) and math.isnan(value))


@dataclass(frozen=True)
class Failure:
    """Why one point has no value: the lowering stage it stopped at and its first error line."""

    stage: str
    error: str

    def to_json(self) -> dict[str, str]:
        return {"stage": self.stage, "error": self.error}


@dataclass(frozen=True)
class Point:
    """One benchmark at one parameter combination of one commit."""

    benchmark: str
    params: Params
    value: float | None
    failure: Failure | None = None

    @property
    def failed(self) -> bool:
        return self.value is None


@dataclass
class BenchmarkResult:
    """One benchmark's row of a result file: its parameter grid, values and asv's bookkeeping.

    ``params`` are asv's own strings (``"'mish'"``, ``"50"``); :meth:`points`
    unquotes them. ``values`` follow the order of the parameter product.
    """

    name: str
    params: list[list[str]]
    values: list[Any]
    version: str | None = None
    started_at: int | None = None
    duration: float | None = None
    stats: dict[str, list[Any]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  #: columns vkbench does not read (samples, ...)

    @property
    def cls(self) -> str:
        """``bench_probes.ProbeCoverage`` of ``bench_probes.ProbeCoverage.track_cpu_ops``."""
        return self.name.rsplit(".", 1)[0]

    @property
    def method(self) -> str:
        return self.name.rsplit(".", 1)[1]

    def grid(self) -> list[Params]:
        """Every parameter combination, unquoted, in asv's order (``[()]`` when unparametrized)."""
        from itertools import product

        if not self.params:
            return [()]
        return [tuple(unquote(p) for p in combo) for combo in product(*self.params)]

    def points(self, failures: dict[tuple[str, Params], Failure] | None = None) -> list[Point]:
        out = []
        for combo, value in zip(self.grid(), self.values, strict=False):
            number = float(value) if finite(value) else None
            why = (failures or {}).get((self.name, combo)) if number is None else None
            out.append(Point(self.name, combo, number, why))
        return out

    def quoted_names(self) -> list[str]:
        """``name(param, ...)`` per combination, as asv matches ``-b`` patterns against it."""
        from itertools import product

        if not self.params:
            return [self.name]
        return [f"{self.name}({', '.join(combo)})" for combo in product(*self.params)]

    def stat(self, column: str) -> list[Any]:
        return self.stats.get(column) or [None] * len(self.values)


def unquote(value: Any) -> str:
    """asv stores string parameters as their ``repr``: ``"'mish'"`` -> ``mish``; numbers stay as written."""
    text = str(value)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        import ast

        try:
            return str(ast.literal_eval(text))
        except (SyntaxError, ValueError):
            return text[1:-1]
    return text


@dataclass
class Provenance:
    """How a result file was recorded: what vkbench wrote beside it at recording time."""

    tier: str | None = None  #: the ``vkbench`` tier whose ``-b`` pattern selected the run
    #: How ``tier`` became known: ``"recorded"`` (written by the run) or ``"inferred"`` (a file
    #: recorded before tiers were stored, given the largest tier it holds by a migration).
    tier_source: str | None = None
    launch_method: str | None = None  #: asv's ``launch_method`` (``forkserver``/``spawn``)
    bench_pattern: str | None = None  #: the ``-b`` pattern itself
    recorded_at: str | None = None  #: ISO 8601, when vkbench wrote the sidecar
    vkbench_commit: str | None = None  #: the vkbench checkout that recorded it
    base_wheel: str | None = None  #: the release wheel an ``aot`` build overlaid the commit on
    torch: str | None = None  #: the torch the run lowered with (``torch.__version__``)
    #: the torch the recorded commit pins (its ``torch_pin.py``: 2.12.0 before 294c328c, 2.13.0 after)
    torch_pin: str | None = None
    measured_as: str | None = None  #: the commit whose lowering inputs this one shares, when not itself
    release: str | None = None  #: the release tag (``v1.4.0``) at the recorded commit, if any

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


#: What the partitioner left on the CPU in one workload: op -> {"nodes": n, "reasons": {reason: nodes}}.
CpuOps = dict[str, dict[str, Any]]


@dataclass
class Sidecar:
    """vkbench's versioned companion of one asv result file (``<file stem>.vkbench``)."""

    provenance: Provenance = field(default_factory=Provenance)
    failures: dict[tuple[str, Params], Failure] = field(default_factory=dict)
    #: Wheel paths of the ``executorch`` files the run's lowerings read at this commit (imports),
    #: so a new import is seen against the class's input set (:mod:`vkbench.commits.fingerprint`).
    inputs: set[str] = field(default_factory=set)
    #: Benchmark -> the ``-b`` pattern of the run that last wrote it ("" for all): asv writes NaN for
    #: the combinations the pattern left out, which are then not points (:meth:`ResultFile.points`).
    #: A benchmark absent here was written before vkbench stored what its runs were.
    patterns: dict[str, str] = field(default_factory=dict)
    #: Benchmark module -> workload -> its CPU ops and the partitioner's reasons, as the run that
    #: lowered it there saw them: what a step in a count is explained by.
    cpu: dict[str, dict[str, CpuOps]] = field(default_factory=dict)
    #: Benchmark module -> vkbench files its records read outside the list that its benchmarks'
    #: version covers (:mod:`vkbench.suite.identity`): what the next measurement of that list adds.
    suite_reads: dict[str, set[str]] = field(default_factory=dict)


@dataclass
class ResultFile:
    """One asv result file (machine x commit x environment), read once.

    ``document`` holds the file's other top-level fields untouched, so a
    rewrite (migrations, re-keying) loses nothing.
    """

    path: Path
    machine: str
    commit: str
    date: int
    env_name: str
    results: dict[str, BenchmarkResult]
    durations: dict[str, float] = field(default_factory=dict)
    columns: list[str] = field(default_factory=list)
    document: dict[str, Any] = field(default_factory=dict)
    sidecar: Sidecar = field(default_factory=Sidecar)

    @property
    def tier(self) -> str | None:
        return self.sidecar.provenance.tier

    def values(self, benchmark: str) -> dict[Params, float | None]:
        """``{params: value}`` of one benchmark's recorded points (empty when the file does not hold it)."""
        return {point.params: point.value for point in self.points(benchmark)}

    def points(self, benchmark: str) -> list[Point]:
        """The benchmark's points that the run recording this file selected.

        asv writes every combination of a benchmark's grid, and NaN for the ones a ``-b`` pattern
        left out: those were not run, so they are not points (let alone failures). The pattern is
        the one the sidecar stored for this benchmark (runs with different patterns accumulate in
        one file); a benchmark without one keeps every point.
        """
        held = self.results.get(benchmark)
        if held is None:
            return []
        pattern = self.sidecar.patterns.get(benchmark)
        points = held.points(self.sidecar.failures)
        if not pattern:
            return points
        import re

        names = held.quoted_names()
        return [p for p, name in zip(points, names, strict=False)
                if p.value is not None or re.search(pattern, name)]

    def version(self, benchmark: str) -> str | None:
        """asv's stored ``version`` of the benchmark (since the suite's identity, its digest)."""
        held = self.results.get(benchmark)
        return held.version if held is not None else None

    def stamped(self, benchmark: str) -> bool:
        """Whether a run that stored its provenance wrote this benchmark (an older vkbench did not)."""
        return benchmark in self.sidecar.patterns

    def failure(self, benchmark: str, params: Params) -> Failure | None:
        return self.sidecar.failures.get((benchmark, params))

    def cpu(self, benchmark: str, workload: str) -> CpuOps | None:
        """What the partitioner left on the CPU in ``workload`` for ``benchmark``'s module, and why
        (None: not stored, e.g. recorded before vkbench kept it)."""
        return self.sidecar.cpu.get(benchmark.split(".", 1)[0], {}).get(workload)


@dataclass(frozen=True)
class ReadProblem:
    """A file that could not be read: one line naming it and what is wrong."""

    path: Path
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass
class ResultSet:
    """Every result file of a results directory (``<dir>/<machine>/*.json``) and what could not be read."""

    root: Path
    files: list[ResultFile]
    problems: list[ReadProblem]
    benchmarks: dict[str, dict[str, Any]]  #: ``benchmarks.json``: the suite as asv last discovered it
    machines: dict[str, dict[str, Any]]  #: ``<machine>/machine.json``

    def commits(self) -> list[str]:
        """Recorded commits in commit-date order (the earliest file's date for a commit)."""
        dates: dict[str, int] = {}
        for f in self.files:
            dates[f.commit] = min(dates.get(f.commit, f.date), f.date)
        return [c for c, _ in sorted(dates.items(), key=lambda item: (item[1], item[0]))]

    def holding(self, *benchmarks: str) -> list[ResultFile]:
        return [f for f in self.files if any(b in f.results for b in benchmarks)]
