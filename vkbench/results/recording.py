"""What vkbench writes beside asv's results when it records a run.

asv's result files say neither which tier a run was (the ``-b`` pattern),
nor how it was launched, nor why a point is NaN. ``vkbench record`` and
``vkbench upstream -- run`` wrap ``asv run`` in :func:`recording`: before
the run it notes every result file's state and points the suite's failure
log (:mod:`vkbench.results.failure_log`) at a
temporary file; after it, every file the run wrote gets its sidecar
(:mod:`vkbench.results.sidecar`): the provenance given, and the stage and
first error line of each failed point, matched by the commit and
environment asv ran.

A failed workload fails every benchmark of its module that reads it, so a
reason logged for workload ``w`` of kind ``probe`` is stored for each point
of a ``bench_probes`` benchmark whose first parameter is ``w`` and that has
no value (or, for ``ProbeFailure``, the value 1). A runtime ladder point (kind ``runtime``, workload
``entry|backend|runner``) that stopped short of "matches" keeps the runtime's own error line the same
way (:func:`vkbench.results.ladder.ladder_failures`), so an asv run of the runtime tier stores it with
no later ``vkbench runtime stamp-reasons``.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from vkbench.results import sidecar
from vkbench.results.asv_files import ResultFileError, read_dir, read_file, result_paths
from vkbench.results.cost import inferred_tier, unrecorded_benchmarks
from vkbench.results.failure_log import (
    KIND_MODULES,
    LOG_SETTING,
    WorkloadCpu,
    WorkloadFailures,
    read_cpu_log,
    read_failure_log,
    read_inputs_log,
    read_suite_log,
)
from vkbench.results.ladder import ladder_failures
from vkbench.results.model import Failure, Params, Provenance, ResultFile
from vkbench.suite import catalogue

#: Benchmarks whose value (not NaN) says "failed": they keep the reason too.
FAILED_AS_VALUE = {catalogue.PROBE_FAILED.name}


State = tuple[float, int, float | None]  #: a result file's mtime and size, and its sidecar's mtime


def _state(root: Path) -> dict[Path, State]:
    """Each result file's mtime and size, and its sidecar's mtime (``None`` when it has none)."""
    out = {}
    for path in result_paths(root):
        side = sidecar.path_for(path)
        out[path] = (path.stat().st_mtime, path.stat().st_size,
                     side.stat().st_mtime if side.exists() else None)
    return out


Started = dict[Path, dict[str, tuple[int | None, str | None]]]  #: file -> benchmark -> (started_at, version)


def _started(root: Path) -> Started:
    """Per readable result file, when asv last started each of its benchmarks, and their versions."""
    out = {}
    for path in result_paths(root):
        try:
            out[path] = {name: (r.started_at, r.version) for name, r in read_file(path).results.items()}
        except ResultFileError:
            continue
    return out


def union_pattern(previous: str | None, new: str | None) -> str:
    """The ``-b`` pattern selecting what either run selected ("" selects everything).

    ``previous`` is None when the benchmark's earlier points were not kept (a new benchmark, or a
    new version of it: asv drops the old row), "" when they were all selected.
    """
    if previous is None:
        return new or ""
    if not previous or not new:
        return ""
    return previous if previous == new else f"(?:{previous})|(?:{new})"


def written_patterns(record: ResultFile, earlier: dict[str, tuple[int | None, str | None]],
                     stored: dict[str, str], pattern: str | None, since_ms: float | None) -> dict[str, str]:
    """Benchmark -> the pattern now selecting its points, for each benchmark this run wrote.

    asv keeps a benchmark's unselected points from the earlier run when its version is unchanged
    (``Results.add_result``), so the pattern is the union with the earlier one; a benchmark
    without a stored pattern was written whole by an older vkbench. A row asv started before the
    run began was not written by it (the file was copied in meanwhile).
    """
    out = {}
    for name, result in record.results.items():
        before = earlier.get(name)
        if before is not None and before[0] == result.started_at:
            continue
        if since_ms is not None and result.started_at is not None and result.started_at < since_ms:
            continue
        kept = before is not None and before[1] == result.version
        out[name] = union_pattern(stored.get(name, "") if kept else None, pattern)
    return out


def failures_for(record: ResultFile, workloads: WorkloadFailures) -> list[tuple[str, Params, Failure]]:
    """The failed points of ``record`` that the logged workload failures explain."""
    out = []
    for (kind, workload), failure in workloads.items():
        module = KIND_MODULES.get(kind)
        for name, result in record.results.items():
            if module is None or not name.startswith(module + "."):
                continue
            for point in result.points():
                if not point.params or point.params[0] != workload:
                    continue
                if point.value is None or (name in FAILED_AS_VALUE and point.value):
                    out.append((name, point.params, failure))
    return out


def _matching[T: (WorkloadFailures, WorkloadCpu, set[str], dict[str, set[str]])](
        log: dict[tuple[str, str], T], record: ResultFile, empty: T) -> T:
    """The log entries of the record's commit and environment (an installed release runs as
    ``existing`` with its commit set by vkbench, so an empty ``ASV_COMMIT`` matches any commit)."""
    for (commit, env), found in log.items():
        if commit in ("", record.commit) and env in ("", record.env_name):
            empty.update(found)
    return empty


def stamp(root: Path, before: dict[Path, State], provenance: Provenance,
          log: dict[tuple[str, str], WorkloadFailures],
          per_file: Callable[[ResultFile], Provenance] | None = None,
          reads: dict[tuple[str, str], set[str]] | None = None,
          started: Started | None = None, since_ms: float | None = None,
          cpu: dict[tuple[str, str], WorkloadCpu] | None = None,
          suite_reads: dict[tuple[str, str], dict[str, set[str]]] | None = None) -> list[Path]:
    """Write the sidecar of every result file under ``root`` that changed since ``before``.

    ``per_file`` adds what depends on the file's commit (its release tag, the base wheel).
    """
    if provenance.tier and not provenance.tier_source:
        provenance.tier_source = "recorded"
    stamped = []
    for path, state in _state(root).items():
        if before.get(path) == state:
            continue
        earlier = before.get(path)
        if state[2] is not None and state[2] != (earlier[2] if earlier else None):
            # The sidecar changed while asv ran, and this run writes sidecars only here: another
            # run wrote the file and its sidecar (a re-recording lane copies both in), so it is
            # not this run's to stamp.
            continue
        try:
            record = read_file(path)
        except ResultFileError:
            continue  # reported by whoever reads the directory; nothing to stamp
        written = written_patterns(record, (started or {}).get(path, {}), record.sidecar.patterns,
                                   provenance.bench_pattern, since_ms)
        if not written:
            continue  # changed, but not by this run
        logged = _matching(log, record, {})
        sidecar.merge(path, provenance, failures_for(record, logged) + ladder_failures(record, logged),
                      _matching(reads or {}, record, set()), written, _matching(cpu or {}, record, {}),
                      _matching(suite_reads or {}, record, {}))
        if per_file is not None:
            sidecar.merge(path, per_file(record))
        stamped.append(path)
    return stamped


def provenance(tier: str | None, bench_pattern: str | None, launch_method: str | None,
               **fields: str | None) -> Provenance:
    """The provenance of a run starting now (``fields``: base wheel, torch, vkbench commit, ...)."""
    return Provenance(tier=tier, bench_pattern=bench_pattern, launch_method=launch_method,
                      recorded_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), **fields)


@contextmanager
def recording(root: Path, run_provenance: Provenance,
              per_file: Callable[[ResultFile], Provenance] | None = None) -> Iterator[dict[str, str]]:
    """Around an ``asv run`` writing to ``root``: yields the environment to run asv with, then stamps.

    The failure log lives in a temporary file for the run; the reasons end up
    in the sidecars only, so an interrupted run leaves no stray log behind.
    """
    root.mkdir(parents=True, exist_ok=True)
    # asv's started_at is whole milliseconds; a second's margin keeps every row of this run
    before, started, since_ms = _state(root), _started(root), time.time() * 1000 - 1000
    with tempfile.TemporaryDirectory(prefix="vkbench-failures-") as tmp:
        log = Path(tmp) / "failures.jsonl"
        try:
            yield {**os.environ, LOG_SETTING: str(log)}
        finally:
            stamp(root, before, run_provenance, read_failure_log(log), per_file, read_inputs_log(log),
                  started, since_ms, read_cpu_log(log), read_suite_log(log))


def stamp_inferred_tiers(root: Path) -> list[tuple[Path, str]]:
    """Migration: give every result file without a stored tier the tier it holds (``tier_source``
    ``"inferred"``), so readers stop re-deriving it; files with a stored tier are left alone."""
    found = read_dir(root)
    unrecorded = unrecorded_benchmarks(found)
    stamped = []
    for record in found.files:
        if record.tier is not None:
            continue
        cost = inferred_tier(record, found.benchmarks, unrecorded)
        if cost is not None:
            sidecar.merge(record.path, Provenance(tier=cost.tier, tier_source="inferred"))
            stamped.append((record.path, cost.tier))
    return stamped
