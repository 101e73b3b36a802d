"""Confirmations: a step of the history re-measured on both sides before it is reported.

A step between two recorded neighbours is a lead until both sides are measured again, back to back,
in one asv run, on one machine, with one suite (as Chromium's Pinpoint re-runs both sides of an alert
before bisecting it). This module is the one reader and the one writer of what those re-measurements
found, ``<results>/confirmations.json`` (:data:`SCHEMA`), and holds the pure logic around them, so
tests drive it with asv result files written in a temp dir:

* :func:`pending`: the steps that need confirming (same-suite rows and the timing steps waiting for
  it, without a stored confirmation: a stored one is never re-run, so ``history confirm`` resumes);
* :func:`pairs`: the steps grouped per (previous, commit) pair and kind, each group one asv run with
  a ``-b`` pattern of exactly its points;
* :func:`measured` / :func:`timed`: a re-measured value (or samples) read back with the results model;
* :func:`count_verdict` / :func:`timing_verdict`: whether the step reproduced. A count must come out
  equal on both sides; the deterministic partitioner-work track within its own 2 % tolerance; a
  timing must be judged different by asv's own decision (:func:`asv.commands.compare._is_result_better`,
  the Mann-Whitney U test of ``asv._stats.is_different`` plus the factor), on at least
  :data:`MIN_SAMPLES` interleaved samples a side;
* :func:`audit`: every stored confirmation against its own verdict and its kept files (what a reader
  can check without re-running anything).

Each confirmation keeps its evidence: the command that re-measured it, asv's exit status and the
re-measured result files, kept under ``<results>/confirmations/<run id>/`` (:func:`run_id`; one folder
per pair's run, shared by its steps: asv's result files and sidecars of the machine, or, for a runtime
pair, ``measured.json``). Confirmations stored before that (version 1 of the file) have none: they are
read with ``command``, ``exit_code`` and ``files`` null and ``not_kept`` saying so (:func:`_from_v1`),
and the audit checks only their values against their verdict.

A corrupt file is one :class:`ConfirmationsError` line naming it and is never rewritten: the writer
reads what is stored first and refuses to write over what it cannot read. The writer holds the results
folder's lock (:mod:`vkbench.results.locks`) from that read to its write.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vkbench.results import locks
from vkbench.results.asv_files import read_dir
from vkbench.results.model import ResultSet, finite
from vkbench.suite import catalogue

SCHEMA = "vkbench-confirmations/2"
FILE = "confirmations.json"
#: Where the re-measured files of each run are kept, beside the file (``<results>/confirmations/<id>/``).
KEPT = "confirmations"
#: A runtime pair's kept measurement (no asv ran: each side's runner, in this process).
MEASURED = "measured.json"
#: Why a confirmation of version 1 of the file has no command, exit status or files.
NOT_KEPT_V1 = ("recorded before confirmations kept their command, asv's exit code and result files "
               "(vkbench-confirmations/1): its values are all there is")
FAILED = "failed"
#: Samples a side below which asv's Mann-Whitney test cannot reach its p < 0.002 (asv compare).
MIN_SAMPLES = 6
#: asv continuous's factor for timings (docs/suite.md derives it from measured noise).
TIMING_FACTOR = 1.4
#: The deterministic partitioner-work track: a step is a change of more than this fraction.
EVENTS_TOLERANCE = 0.02

Value = float | str  #: a number, or ``"failed"``
#: asv modules recorded per runtime machine: a step of theirs is one machine's records stepping (each
#: runtime machine has its own history), so the machine is part of its key. A lowering step's commits'
#: files are merged over machines: its key has no machine.
PER_MACHINE_MODULES = frozenset({catalogue.STEP_LIMIT.module, catalogue.POLICY_LADDER.module})


class ConfirmationsError(ValueError):
    """A confirmations file that cannot be read; ``str()`` is one line naming it."""


@dataclass(frozen=True)
class StepKey:
    """Which step a confirmation answers: a benchmark's point between two recorded commits."""

    benchmark: str
    param: str
    previous: str  #: the recorded commit before the step
    commit: str  #: the recorded commit after it (not the class's first commit: that one holds no values)
    machine: str = ""  #: the runtime machine whose records step ("" for a lowering step)


def step_machine(benchmark: str, machine: str) -> str:
    """The machine of a step's key: ``machine`` for a per-machine (runtime) benchmark, else ""."""
    return machine if benchmark.split(".", 1)[0] in PER_MACHINE_MODULES else ""


@dataclass
class Step:
    """A step to confirm: its key, the recorded values and the suite digest both sides carry."""

    key: StepKey
    before: Value
    after: Value
    suite: str | None = None
    timing: bool = False  #: a ``time_`` benchmark: re-measured interleaved, judged by asv's statistics


@dataclass
class Confirmation:
    """What re-measuring both sides of one step found."""

    benchmark: str
    param: str
    previous: str
    commit: str
    date: str  #: ISO 8601, when the re-measurement ran
    machine: str  #: asv machine name (the recorded files')
    suite: str | None  #: the re-measured benchmark's asv version (its suite digest)
    recorded_before: Value
    recorded_after: Value
    measured_before: Value | None  #: None: the run did not produce the point
    measured_after: Value | None
    reproduced: bool
    how: str = ""  #: the rule applied and what it saw (samples, p-test, tolerance)
    samples_before: list[float] = field(default_factory=list)
    samples_after: list[float] = field(default_factory=list)
    #: The command line that re-measured both sides (None: not kept, ``not_kept`` says why).
    command: list[str] | None = None
    exit_code: int | None = None  #: asv's exit status (None: no asv ran, as for a runtime pair, or not kept)
    #: The re-measured files, relative to the results folder (``confirmations/<run id>``; None: not kept).
    files: str | None = None
    not_kept: str | None = None  #: why ``command`` and ``files`` are absent

    @property
    def timing(self) -> bool:
        """A ``time_`` benchmark: judged on interleaved samples."""
        return self.benchmark.rsplit(".", 1)[-1].startswith("time_")

    @property
    def key(self) -> StepKey:
        return StepKey(self.benchmark, self.param, self.previous, self.commit,
                       step_machine(self.benchmark, self.machine))

    def line(self) -> str:
        """One line saying what was recorded, what was measured again and the verdict."""
        return (f"{self.benchmark.split('.', 1)[1]}({self.param}): recorded {self.recorded_before} -> "
                f"{self.recorded_after}, measured {self.measured_before} -> {self.measured_after}: "
                f"{'reproduced' if self.reproduced else 'NOT reproduced'}")

    def answers(self, step: Step) -> bool:
        """Whether this confirmation is of ``step`` as recorded now (a re-recorded side is a new step)."""
        return self.key == step.key and _same(self.recorded_before, step.before) and \
            _same(self.recorded_after, step.after)

    def evidence(self) -> dict[str, Any]:
        """What the verdict rests on: the command, asv's exit status, the kept files (or why none)."""
        return {"command": self.command, "exit_code": self.exit_code, "files": self.files,
                "not_kept": self.not_kept}

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Confirmation:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


Stored = dict[StepKey, Confirmation]


def path_for(results_root: Path) -> Path:
    """Where a results directory keeps its confirmations: beside the machines' folders."""
    return Path(results_root) / FILE


def _from_v1(item: dict[str, Any]) -> dict[str, Any]:
    """Migration: a version-1 confirmation kept its values only; no command, exit status or files."""
    return {**item, "command": None, "exit_code": None, "files": None, "not_kept": NOT_KEPT_V1}


#: The reader of each stored version: its items as the current version's.
_MIGRATIONS = {"vkbench-confirmations/1": _from_v1, SCHEMA: lambda item: item}


def read(path: Path) -> Stored:
    """Every stored confirmation ({} when the file does not exist); :class:`ConfirmationsError` when
    it exists and cannot be read."""
    path = Path(path)
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
        migrate = _MIGRATIONS.get(data.get("schema")) if isinstance(data, dict) else None
        if migrate is None:
            known = ", ".join(map(repr, _MIGRATIONS))
            raise ValueError(f"not a confirmations file (schema not one of {known})")
        found = [Confirmation.from_json(migrate(item)) for item in data["confirmations"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise ConfirmationsError(f"{path}: {error}") from None
    return {c.key: c for c in found}


def write(path: Path, new: Iterable[Confirmation]) -> Path:
    """Store ``new`` beside what is stored (a new one of a key replaces the old); atomic, holding the
    folder's lock from the read to the write. Raises :class:`ConfirmationsError`, writing nothing, when
    the stored file cannot be read."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with locks.locked(path.parent):
        stored = read(path)
        for confirmation in new:
            stored[confirmation.key] = confirmation
        ordered = sorted(stored.values(), key=lambda c: (c.commit, c.previous, c.benchmark, c.param,
                                                         c.machine))
        document = {"schema": SCHEMA, "confirmations": [c.to_json() for c in ordered]}
        locks.write_atomic(path, json.dumps(document, indent=1) + "\n")
    return path


def run_id(previous: str, commit: str, date: str, kind: str) -> str:
    """The folder name of one run's kept files: when it ran, the pair and the kind of run
    (``20261207T101500Z-3719228d-76d6b1e5-count``)."""
    stamp = re.sub(r"[^0-9T]", "", date.split("+")[0]) + "Z"
    return f"{stamp}-{previous[:8]}-{commit[:8]}-{re.sub(r'[^A-Za-z0-9_.-]', '_', kind)}"


def kept_folder(results_root: Path, run: str) -> Path:
    """Where the files of run ``run`` (:func:`run_id`) are kept."""
    return Path(results_root) / KEPT / run


def lookup(stored: Stored, step: Step) -> Confirmation | None:
    """The stored confirmation of ``step`` as recorded now, if any."""
    found = stored.get(step.key)
    return found if found is not None and found.answers(step) else None


# ---------------------------------------------------------------------------------------------
# which steps, which runs


def settled(found: Confirmation | None) -> bool:
    """Whether a stored confirmation answers its step for good: it kept its command and files, reproduced
    or not. One stored before those were kept (``not_kept``) is measured again, and the new one replaces
    it when it is stored."""
    return found is not None and not found.not_kept


def pending(steps: Iterable[Step], stored: Stored) -> list[Step]:
    """The steps :func:`settled` by no stored confirmation: what ``history confirm`` measures."""
    return [s for s in steps if not settled(lookup(stored, s))]


def asv_name(benchmark: str, param: str) -> str:
    """``name(param, ...)`` as asv matches ``-b`` against it: strings quoted, numbers bare."""
    if not param:
        return benchmark
    parts = [p if re.fullmatch(r"-?\d+(\.\d+)?", p) else repr(p) for p in param.split(", ")]
    return f"{benchmark}({', '.join(parts)})"


@dataclass
class Pair:
    """One asv run: both sides of every step between ``previous`` and ``commit`` of one kind."""

    previous: str
    commit: str
    timing: bool
    steps: list[Step]

    @property
    def pattern(self) -> str:
        """A ``-b`` regex selecting exactly the points of these steps."""
        names = sorted({re.escape(asv_name(s.key.benchmark, s.key.param)) for s in self.steps})
        return "^(" + "|".join(names) + ")$"


def pairs(steps: Iterable[Step]) -> list[Pair]:
    """Steps grouped by (previous, commit, timing), in first-seen order: counts and timings of one pair
    are two runs, because timings are interleaved over many rounds that a count need not pay for."""
    grouped: dict[tuple[str, str, bool], list[Step]] = {}
    for step in steps:
        grouped.setdefault((step.key.previous, step.key.commit, step.timing), []).append(step)
    return [Pair(previous, commit, timing, found) for (previous, commit, timing), found in grouped.items()]


def chosen(found: Sequence[Pair], wanted: Sequence[str]) -> list[Pair]:
    """The pairs of ``found`` named by ``wanted`` (``PREVIOUS..COMMIT``, each side a hash prefix), so
    that two lanes on two cores can each take their share of a long confirmation; no name, every pair.
    Raises ``ValueError`` naming a ``wanted`` that is malformed or matches no pair waiting."""
    if not wanted:
        return list(found)
    out: list[Pair] = []
    for name in wanted:
        previous, sep, commit = name.partition("..")
        if not sep or not previous or not commit:
            raise ValueError(f"--pair {name!r}: expected PREVIOUS..COMMIT")
        matched = [p for p in found if p.previous.startswith(previous) and p.commit.startswith(commit)]
        if not matched:
            raise ValueError(f"--pair {name}: no pair of steps waits there")
        out += [p for p in matched if p not in out]
    return out


# ---------------------------------------------------------------------------------------------
# reading re-measured values back


def _point(found: ResultSet, commit: str, benchmark: str, param: str) -> tuple[Any, Any] | None:
    """``(file, index in the benchmark's grid)`` of a point at ``commit`` in ``found``."""
    for record in found.files:
        if record.commit != commit or benchmark not in record.results:
            continue
        result = record.results[benchmark]
        wanted = tuple(param.split(", ")) if param else ()
        selected = {p.params for p in record.points(benchmark)}
        for index, params in enumerate(result.grid()):
            if params == wanted and params in selected:
                return record, index
    return None


def measured(found: ResultSet, commit: str, benchmark: str, param: str) -> Value | None:
    """The value a run recorded for one point: a number, ``"failed"``, or None when it has none."""
    hit = _point(found, commit, benchmark, param)
    if hit is None:
        return None
    record, index = hit
    value = record.results[benchmark].values[index]
    return float(value) if finite(value) else FAILED


def version(found: ResultSet, commit: str, benchmark: str) -> str | None:
    """The asv version (suite digest) a run stored for ``benchmark`` at ``commit``."""
    return next((f.version(benchmark) for f in found.files if f.commit == commit and benchmark in f.results),
                None)


@dataclass
class Timed:
    """One side of a timing: asv's value (the median), its statistics and its raw samples."""

    value: float
    stats: dict[str, Any]
    samples: list[float]


def timed(found: ResultSet, commit: str, benchmark: str, param: str) -> Timed | None:
    """A timing point with the statistics and samples asv stored (``--record-samples``)."""
    hit = _point(found, commit, benchmark, param)
    if hit is None:
        return None
    record, index = hit
    result = record.results[benchmark]
    value = result.values[index]
    if not finite(value):
        return None
    stats = {column[len("stats_"):]: result.stat(column)[index] for column in result.stats}
    raw = result.extra.get("samples") or []
    samples = [float(x) for x in (raw[index] if index < len(raw) and raw[index] else []) if finite(x)]
    return Timed(float(value), stats, samples)


# ---------------------------------------------------------------------------------------------
# verdicts


def _same(a: Value | None, b: Value | None) -> bool:
    if a is None or b is None:
        return a is b
    if FAILED in (a, b):
        return a == b
    return round(float(a), 4) == round(float(b), 4)


def count_verdict(step: Step, before: Value | None, after: Value | None) -> tuple[bool, str]:
    """Whether a count step reproduced: both re-measured values equal the recorded ones (exactly;
    the partitioner-work track within :data:`EVENTS_TOLERANCE`, its own noise floor)."""
    if step.key.benchmark == catalogue.PARTITION_EVENTS.name:
        def near(m: Value | None, r: Value) -> bool:
            if m is None or FAILED in (m, r):
                return m == r
            return abs(float(m) - float(r)) <= EVENTS_TOLERANCE * abs(float(r))
        ok = near(before, step.before) and near(after, step.after)
        return ok, f"both sides within {EVENTS_TOLERANCE:.0%} of the recorded events"
    ok = _same(before, step.before) and _same(after, step.after)
    return ok, "exact count on both sides"


def timing_verdict(step: Step, before: Timed | None, after: Timed | None,
                   factor: float = TIMING_FACTOR) -> tuple[bool, str]:
    """Whether a timing step reproduced, by asv compare's own decision on the re-measured samples:
    ``_is_result_better`` (``asv._stats.is_different``'s Mann-Whitney U test at p < 0.002, then the
    factor) in the recorded direction, with at least :data:`MIN_SAMPLES` samples a side."""
    from asv.commands.compare import _is_result_better

    if before is None or after is None:
        return False, "a side was not measured"
    n_before, n_after = len(before.samples), len(after.samples)
    if min(n_before, n_after) < MIN_SAMPLES:
        return False, f"{n_before}/{n_after} samples: fewer than {MIN_SAMPLES} a side"
    slower = step.after != FAILED and step.before != FAILED and float(step.after) > float(step.before)
    # asv takes the median of the samples as the value; the stored one is the same median
    b_value, a_value = statistics.median(before.samples), statistics.median(after.samples)
    # asv uses its statistics only where the stats say more than one sample ("repeat": their count)
    b_ss = ({**before.stats, "repeat": n_before}, before.samples)
    a_ss = ({**after.stats, "repeat": n_after}, after.samples)
    if slower:
        ok = bool(_is_result_better(b_value, a_value, b_ss, a_ss, factor))
    else:
        ok = bool(_is_result_better(a_value, b_value, a_ss, b_ss, factor))
    ratio = a_value / b_value if b_value else math.inf
    return ok, (f"asv compare's decision (Mann-Whitney U, p < 0.002, factor {factor}) on "
                f"{n_before}/{n_after} interleaved samples: median {b_value:.4g} -> {a_value:.4g} "
                f"({ratio:.2f}x)")


# ---------------------------------------------------------------------------------------------
# auditing what is stored


@dataclass
class Audit:
    """What :func:`audit` found: one line per disagreement, and how many confirmations keep evidence."""

    problems: list[str]
    kept: int  #: confirmations with their command, exit status and kept files
    not_kept: int  #: confirmations stored before commands were kept (``not_kept`` says so)


def _side(value: Value | None, samples: list[float]) -> Timed | None:
    return None if value is None or value == FAILED else Timed(float(value), {}, list(samples))


def verdict_problems(c: Confirmation) -> list[str]:
    """Where a confirmation's stored values disagree with its stored verdict: the verdict computed again
    from the recorded and re-measured values (and, for a timing, its samples) by the rule it names."""
    step = Step(c.key, c.recorded_before, c.recorded_after, c.suite, timing=c.timing)
    problems = []
    if c.timing:
        for side, value, samples in (("before", c.measured_before, c.samples_before),
                                     ("after", c.measured_after, c.samples_after)):
            if samples and value not in (None, FAILED) and not _same(value, statistics.median(samples)):
                problems.append(f"measured {side} {value} is not the median of its {len(samples)} samples")
        ok, _ = timing_verdict(step, _side(c.measured_before, c.samples_before),
                               _side(c.measured_after, c.samples_after))
    else:
        ok, _ = count_verdict(step, c.measured_before, c.measured_after)
    if ok != c.reproduced:
        said = "reproduced" if c.reproduced else "not reproduced"
        problems.append(f"stored as {said}, but its values are {'reproduced' if ok else 'not reproduced'}")
    return problems


def evidence_problems(c: Confirmation, results_root: Path) -> list[str]:
    """Where a confirmation's evidence is missing or disagrees with its values: its kept files read
    again (asv's result files with the results model; a runtime pair's ``measured.json``) must give the
    re-measured values, samples and suite it stores. One stored before commands were kept must say so."""
    if c.command is None:
        if not c.not_kept:
            return ["no command and no reason why (not_kept)"]
        if c.files is not None or c.exit_code is not None:
            return ["says its evidence was not kept, yet stores files or an exit code"]
        return []
    if not c.files:
        return ["a command but no kept files"]
    folder = Path(results_root) / c.files
    if not folder.is_dir():
        return [f"kept files {c.files} are missing"]
    sides = (("before", c.previous, c.measured_before, c.samples_before),
             ("after", c.commit, c.measured_after, c.samples_after))
    if (folder / MEASURED).is_file():  # a runtime pair: each side's runner, no asv
        try:
            data = json.loads((folder / MEASURED).read_text())
            kept = {side: data[side].get(c.param) for side in ("before", "after")}
        except (OSError, ValueError, KeyError, AttributeError) as error:
            return [f"{c.files}/{MEASURED} cannot be read ({error})"]
        return [f"measured {side} {value} but {c.files}/{MEASURED} holds {kept[side]}"
                for side, _, value, _ in sides if not _same(value, kept[side])]
    problems = [] if c.exit_code is not None else ["asv's exit code is not stored"]
    found = read_dir(folder)
    problems += [f"kept file {problem}" for problem in found.problems]
    for side, commit, value, samples in sides:
        if c.timing:
            again = timed(found, commit, c.benchmark, c.param)
            held, held_samples = (again.value, again.samples) if again else (None, [])
            if [float(x) for x in samples] != held_samples:
                problems.append(f"samples {side} differ from the kept files' ({len(held_samples)} there)")
        else:
            held = measured(found, commit, c.benchmark, c.param)
        if not _same(value, held):
            problems.append(f"measured {side} {value} but the kept files hold {held}")
    kept_suite = version(found, c.commit, c.benchmark)
    if kept_suite != c.suite:
        problems.append(f"suite {c.suite} but the kept files' is {kept_suite}")
    return problems


def audit(results_root: Path) -> Audit:
    """Every confirmation stored in ``results_root`` checked against its verdict and its kept files
    (:func:`verdict_problems`, :func:`evidence_problems`); :class:`ConfirmationsError` when the file
    cannot be read."""
    stored = read(path_for(results_root))
    problems = []
    for c in sorted(stored.values(), key=lambda c: (c.commit, c.previous, c.benchmark, c.param, c.machine)):
        where = f"{c.benchmark.split('.', 1)[-1]}({c.param}) {c.previous[:8]} -> {c.commit[:8]}"
        problems += [f"{where}: {line}" for line in verdict_problems(c) + evidence_problems(c, results_root)]
    kept = sum(1 for c in stored.values() if c.command is not None)
    return Audit(problems, kept, len(stored) - kept)
