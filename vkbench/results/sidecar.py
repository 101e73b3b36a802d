"""vkbench's companion file of an asv result file: provenance, failure reasons, what stayed on the CPU.

asv stores a skipped or failed benchmark as NaN and prints its reason only
on stderr; it stores neither the tier nor the launch settings a file was
recorded under. vkbench writes them beside the file, as
``<machine>/<result file stem>.vkbench`` (not ``.json``: asv loads every
``*.json`` under its results directory as a result file), in a versioned
JSON form (:data:`SCHEMA`)::

    {"vkbench_sidecar": 2,
     "provenance": {"tier": "gate", "launch_method": "forkserver", ...},
     "runs": [{"provenance": {"tier": "gate", "bench_pattern": "...", "recorded_at": "...", ...},
               "benchmarks": ["bench_probes.ProbeCoverage.track_cpu_ops", ...]},
              {"provenance": "unknown", "note": "why", "benchmarks": [...]}],
     "patterns": {"bench_probes.ProbeCoverage.track_cpu_ops": "^bench_probes\\.", ...},
     "failures": [{"benchmark": "bench_probes.ProbeCoverage.track_cpu_ops",
                   "params": ["mha_cross"], "stage": "preprocess", "error": "..."}],
     "cpu": {"bench_probes": {"mish": {"aten.softplus.default": {"nodes": 1, "reasons": {...}}}}},
     "suite_reads": {"bench_probes": ["vkbench/core/new_helper.py"]}}

Several runs write one file (a gate lane, then a VLA run of a few entries), so each benchmark keeps
the run that measured it: ``runs`` holds every run that wrote a benchmark the file still holds, with
its provenance and its benchmarks (each benchmark in one run: the last that wrote its row), and
``patterns`` the ``-b`` pattern each benchmark's points were selected by. ``provenance`` is the
file's: the run that recorded its tier (a run without a tier, such as a ``-b`` run of a few entries,
leaves it alone) and what the commit is (release tag, base wheel). A run whose provenance is not known
(a sidecar repaired after another run overwrote it) says ``"unknown"`` and why (``note``).

Version 1 (before 2026-12-08) had no ``runs``: :meth:`RunsSidecar.load` reads it through its migration
beside the reader (:data:`MIGRATIONS`, :func:`update_to_2`: no run known for any benchmark), and the
next merge writes it back as version 2.

A sidecar that cannot be read is treated as absent (the asv file is still
the record) and said so, once per file, on stderr: ``vkbench changes`` would
otherwise show the commit without its reasons, tier or patterns with no
hint why. :func:`merge` never drops what an earlier run stored, and holds the folder's lock
(:mod:`vkbench.results.locks`) from its read to its write. Failure
reasons are read through the failure key (:mod:`vkbench.results.failure_key`),
so a reason stored before a mask existed reads like a new one; the file is
not rewritten for it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vkbench.results import locks
from vkbench.results.failure_key import normalize_error
from vkbench.results.model import CpuOps, Failure, Params, Provenance, Sidecar

SCHEMA = 2
SUFFIX = ".vkbench"
#: A run's provenance when it is not known (``note`` says why).
UNKNOWN = "unknown"


class SidecarError(ValueError):
    """A sidecar that cannot be read where it is about to be rewritten; ``str()`` is one line naming it."""


@dataclass
class Run:
    """One run that wrote benchmarks of a result file: its provenance and the benchmarks it measured."""

    benchmarks: set[str]
    provenance: Provenance | None  #: None: not known (``note`` says why)
    note: str = ""  #: how the provenance is known, where it was not written by the run itself

    def to_json(self) -> dict[str, Any]:
        return {"benchmarks": sorted(self.benchmarks),
                "provenance": self.provenance.to_json() if self.provenance is not None else UNKNOWN,
                **({"note": self.note} if self.note else {})}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Run:
        stored = data["provenance"]
        if stored != UNKNOWN and not isinstance(stored, dict):
            raise TypeError(f"a run's provenance is {type(stored).__name__}, not an object or {UNKNOWN!r}")
        benchmarks = data.get("benchmarks") or []
        if not isinstance(benchmarks, list):
            raise TypeError("a run's benchmarks are not a list")
        return cls({str(b) for b in benchmarks}, None if stored == UNKNOWN else _provenance(stored),
                   str(data.get("note") or ""))


@dataclass
class RunsSidecar(Sidecar):
    """A sidecar with the run that measured each benchmark (version 2; :class:`Sidecar` is the model's):
    one data model with its versioned JSON form, read by :meth:`load` (older versions through
    :data:`MIGRATIONS`) and written by :meth:`dump`."""

    runs: list[Run] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunsSidecar:
        """A version-2 sidecar's JSON as a record."""
        provenance = _provenance(data.get("provenance") or {})
        failures = {(str(f["benchmark"]), tuple(str(p) for p in f.get("params") or [])):
                    Failure(str(f.get("stage") or ""),
                            normalize_error(str(f.get("stage") or ""), str(f.get("error") or "")))
                    for f in data.get("failures") or [] if isinstance(f, dict) and "benchmark" in f}
        inputs = {str(i) for i in data.get("inputs") or [] if isinstance(i, str)}
        patterns = {str(k): str(v) for k, v in (data.get("patterns") or {}).items()}
        cpu = {str(module): {str(w): dict(ops) for w, ops in workloads.items() if isinstance(ops, dict)}
               for module, workloads in (data.get("cpu") or {}).items() if isinstance(workloads, dict)}
        suite_reads = {str(module): {str(f) for f in files if isinstance(f, str)}
                       for module, files in (data.get("suite_reads") or {}).items()
                       if isinstance(files, list)}
        kept = [Run.from_json(run) for run in data.get("runs") or []]
        return cls(provenance, failures, inputs, patterns, cpu, suite_reads, kept)

    def to_json(self) -> dict[str, Any]:
        return {"vkbench_sidecar": SCHEMA, "provenance": self.provenance.to_json(),
                **({"runs": [run.to_json() for run in self.runs]} if self.runs else {}),
                "failures": [{"benchmark": name, "params": list(params), **failure.to_json()}
                             for (name, params), failure in sorted(self.failures.items())],
                **({"inputs": sorted(self.inputs)} if self.inputs else {}),
                **({"patterns": dict(sorted(self.patterns.items()))} if self.patterns else {}),
                **({"cpu": {m: dict(sorted(w.items())) for m, w in sorted(self.cpu.items())}}
                   if self.cpu else {}),
                **({"suite_reads": {m: sorted(f) for m, f in sorted(self.suite_reads.items())}}
                   if self.suite_reads else {})}

    @classmethod
    def load(cls, path: Path) -> RunsSidecar | None:
        """The sidecar at ``path`` (None when there is none), an older version migrated; :class:`SidecarError`
        saying what is wrong."""
        try:
            text = Path(path).read_text()
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as error:
            raise SidecarError(f"unreadable ({type(error).__name__}: {error})") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            where = f"at line {error.lineno} column {error.colno}"
            raise SidecarError(f"not JSON ({error.msg} {where})") from None
        if not isinstance(data, dict):
            raise SidecarError(f"not a sidecar (top level is {type(data).__name__})")
        version = data.get("vkbench_sidecar")
        if version != SCHEMA and version not in MIGRATIONS:
            versions = " or ".join(map(str, [*MIGRATIONS, SCHEMA]))
            raise SidecarError(f"not a version-{versions} sidecar (vkbench_sidecar is {version!r})")
        try:
            return cls.from_json(MIGRATIONS[version](data) if version in MIGRATIONS else data)
        except (AttributeError, TypeError, ValueError, KeyError) as error:
            raise SidecarError(f"malformed ({type(error).__name__}: {error})") from None

    def dump(self, path: Path) -> Path:
        """Write the whole sidecar to ``path`` (atomic; the caller holds the folder's lock)."""
        return locks.write_atomic(Path(path), json.dumps(self.to_json(), indent=1, sort_keys=True) + "\n")


def runs(record: Sidecar) -> list[Run]:
    """The runs a sidecar keeps ([] for one read from version 1, or unreadable)."""
    return list(getattr(record, "runs", []))


def run_of(record: Sidecar, benchmark: str) -> Run | None:
    """The run that measured ``benchmark`` (None: not kept, e.g. written before version 2)."""
    return next((run for run in runs(record) if benchmark in run.benchmarks), None)


def path_for(result_path: Path) -> Path:
    return Path(result_path).with_suffix(SUFFIX)


def _provenance(data: dict[str, Any]) -> Provenance:
    known = set(Provenance.__dataclass_fields__)
    return Provenance(**{k: v for k, v in data.items() if k in known})


def update_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """Migration: a version-1 sidecar kept one provenance per file, overwritten by each later run, so
    which run measured a benchmark is not known: no runs (the next merge writes version 2)."""
    return {k: v for k, v in data.items() if k != "runs"}


#: Each older stored version -> its migration to the current form (:data:`SCHEMA`).
MIGRATIONS = {1: update_to_2}


#: Sidecars already reported unreadable by this process: a command reads a file more than once
#: (recording reads every file before and after the run), the user hears of it once.
_REPORTED: set[Path] = set()


def _unreadable(path: Path, what: str) -> RunsSidecar:
    """An empty sidecar, after one line on stderr naming the file and what is wrong with it."""
    if path not in _REPORTED:
        _REPORTED.add(path)
        print(f"vkbench: {path}: {what}; read without its sidecar", file=sys.stderr)
    return RunsSidecar()


def read(result_path: Path) -> RunsSidecar:
    """The sidecar of a result file; an empty one when there is none, or when it cannot be read."""
    path = path_for(result_path)
    try:
        return RunsSidecar.load(path) or RunsSidecar()
    except SidecarError as error:
        return _unreadable(path, str(error))


def read_for_update(result_path: Path) -> RunsSidecar:
    """The sidecar about to be rewritten (empty when there is none); :class:`SidecarError` naming it when
    it cannot be read: such a sidecar is never written over."""
    path = path_for(result_path)
    try:
        return RunsSidecar.load(path) or RunsSidecar()
    except SidecarError as error:
        raise SidecarError(f"{path}: {error}; not rewritten") from None


def write(result_path: Path, record: Sidecar) -> Path:
    """Write a result file's whole sidecar (atomic; the caller holds the folder's lock)."""
    return _upgraded(record).dump(path_for(result_path))


def _upgraded(record: Sidecar) -> RunsSidecar:
    if isinstance(record, RunsSidecar):
        return record
    return RunsSidecar(record.provenance, record.failures, record.inputs, record.patterns, record.cpu,
                       record.suite_reads)


def _take(record: RunsSidecar, benchmarks: set[str]) -> None:
    """``benchmarks`` were written again: no earlier run measured them any more."""
    for run in record.runs:
        run.benchmarks -= benchmarks
    record.runs = [run for run in record.runs if run.benchmarks]


def _add_run(record: RunsSidecar, benchmarks: set[str], provenance: Provenance) -> None:
    _take(record, benchmarks)
    stored = provenance.to_json()
    same = next((run for run in record.runs if run.provenance is not None and not run.note
                 and run.provenance.to_json() == stored), None)
    if same is not None:
        same.benchmarks |= benchmarks
    else:
        record.runs.append(Run(set(benchmarks), Provenance(**stored)))


def _takes_the_file(record: RunsSidecar, written: set[str], run: Provenance) -> bool:
    """Whether a run that wrote ``written`` becomes the file's provenance: the file has no tier yet, or
    the run re-records its tier, or it has a tier and wrote at least as many benchmarks as the file's
    tier run still holds (that run's, or, in a sidecar without runs, the benchmarks no run keeps). A run
    without a tier never relabels a file that has one; a runtime or ``-b`` run of a few benchmarks does
    not relabel a gate file, whichever of two concurrent runs merges last."""
    file_tier = record.provenance.tier
    if file_tier is None or run.tier == file_tier:
        return True
    if run.tier is None:
        return False
    owned = {b for r in record.runs for b in r.benchmarks}
    held = {b for r in record.runs if r.provenance is not None and r.provenance.tier == file_tier
            for b in r.benchmarks} | (set(record.patterns) - owned)
    return len(written) >= len(held - written)


def merge(result_path: Path, provenance: Provenance | None = None,
          failures: Iterable[tuple[str, Params, Failure]] = (), inputs: Iterable[str] = (),
          patterns: dict[str, str | None] | None = None,
          cpu: dict[tuple[str, str], CpuOps] | None = None,
          suite_reads: dict[str, set[str]] | None = None) -> Path:
    """Add to a result file's sidecar: add or replace failures, add to the files read, set each
    written benchmark's ``-b`` pattern (None or "": the run selected all), set each lowered workload's
    CPU ops (``(module, workload) -> ops``), add to the vkbench files each benchmark module read outside
    its list (``module -> files``).

    ``provenance`` with ``patterns``: the run that wrote those benchmarks. It becomes their run (no
    earlier run keeps them), and the file's provenance where it takes the file (:func:`_takes_the_file`:
    a ``-b`` run of a few entries does not relabel a gate file). ``provenance`` alone: facts of the
    file (release tag, base wheel, an inferred tier), set on the file's provenance. ``patterns``
    without ``provenance``: written by a run that stored none, so no run keeps them.

    Holds the folder's lock from read to write; :class:`SidecarError` (nothing written) when the stored
    sidecar cannot be read."""
    with locks.locked(Path(result_path).parent):
        record = read_for_update(result_path)
        for module, files in (suite_reads or {}).items():
            record.suite_reads[module] = record.suite_reads.get(module, set()) | set(files)
        for (module, workload), ops in (cpu or {}).items():
            record.cpu.setdefault(module, {})[workload] = ops
        record.inputs |= set(inputs)
        for benchmark, pattern in (patterns or {}).items():
            record.patterns[benchmark] = pattern or ""  # "": the run selected every combination
        relabel = provenance is not None and (not patterns or _takes_the_file(record, set(patterns),
                                                                              provenance))
        if patterns and provenance is not None:
            _add_run(record, set(patterns), provenance)
        elif patterns:
            _take(record, set(patterns))
        if relabel and provenance is not None:
            for key, value in provenance.to_json().items():
                setattr(record.provenance, key, value)
        for benchmark, params, failure in failures:
            record.failures[(benchmark, tuple(params))] = failure
        return write(result_path, record)


def move(source: Path, target: Path) -> None:
    """Carry a result file's sidecar along when the file is renamed or merged into ``target``.

    Merging keeps both. The moved file's rows replace ``target``'s
    (:func:`vkbench.runs.ledger.normalize_results`), so for the benchmarks the moved sidecar has runs or
    patterns of, its runs, patterns and failures win; ``target``'s own entries win for the rest, and its
    provenance fields over the moved ones.
    """
    old = path_for(source)
    if not old.is_file() or Path(source) == Path(target):
        return
    folders = sorted({str(Path(source).parent.resolve()), str(Path(target).parent.resolve())})
    with locks.locked(Path(folders[0])), locks.locked(Path(folders[-1])):
        moved = _upgraded(read_for_update(source))
        kept = read_for_update(target)
        for key, value in moved.provenance.to_json().items():
            if getattr(kept.provenance, key) is None:
                setattr(kept.provenance, key, value)
        theirs = set(moved.patterns) | {b for run in moved.runs for b in run.benchmarks}
        _take(kept, theirs)
        kept.runs += moved.runs
        kept.failures = {**{k: v for k, v in kept.failures.items() if k[0] not in theirs}, **moved.failures}
        kept.inputs |= moved.inputs
        for module, files in moved.suite_reads.items():
            kept.suite_reads[module] = kept.suite_reads.get(module, set()) | files
        for module, workloads in moved.cpu.items():
            kept.cpu.setdefault(module, {}).update(workloads)
        kept.patterns = {**kept.patterns, **moved.patterns}
        write(target, kept)
        old.unlink()
