"""What vkbench writes beside asv's results when it records a run, and the one way a run's results
reach the shared results folder.

asv's result files say neither which tier a run was (the ``-b`` pattern),
nor how it was launched, nor why a point is NaN. Every recording (``vkbench record``,
``vkbench upstream -- run/continuous/find``, ``history confirm``, ``vkbench runtime record``) wraps
its asv run in :func:`recording`:

* **its own folder.** asv loads a commit's result file before its benchmarks and writes it whole
  after each, so two asv processes on one file drop each other's rows, and a run that stamped what
  changed in a shared folder while it ran once stamped another run's rows as its own. asv writes to a
  private copy instead (:attr:`Recording.results`, seeded with the shared folder's result files and
  sidecars, so asv keeps the points a benchmark's earlier runs recorded, as it does in place; point
  asv at it with :meth:`Recording.config`).
* **one writer per file.** When asv is done, the rows it wrote (started at another time than the
  seed's) are merged into the shared file, and their sidecar entries into its sidecar
  (:mod:`vkbench.results.sidecar`: the run's provenance for the benchmarks it measured, their ``-b``
  pattern, the stage and first error line of each failed point, matched by the commit and
  environment asv ran), holding the machine folder's lock (:mod:`vkbench.results.locks`) from the
  read of the shared file to the write of its sidecar. Rows another run merged meanwhile stay; a
  benchmark both runs measured is the later merge's, with its own pattern and provenance.
* **nothing lost.** A shared file or sidecar that cannot be read is not written over: the merge
  stops with one :class:`RecordingError` line naming it, and the run's own folder is kept (the
  line says where).

The run log (:mod:`vkbench.results.run_log`) lives in the private folder for the run.
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
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from vkbench.results import locks, sidecar
from vkbench.results.asv_files import (
    ResultFileError,
    read_dir,
    read_file,
    read_listing,
    result_paths,
    write_file,
    write_listing,
)
from vkbench.results.cost import inferred_tier, unrecorded_benchmarks
from vkbench.results.ladder import ladder_failures
from vkbench.results.model import Failure, Params, Provenance, ResultFile
from vkbench.results.run_log import KIND_MODULES, LOG_SETTING, RunLog, WorkloadFailures
from vkbench.suite import catalogue

#: Benchmarks whose value (not NaN) says "failed": they keep the reason too.
FAILED_AS_VALUE = {catalogue.PROBE_FAILED.name}


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
                     stored: dict[str, str], pattern: str | None) -> dict[str, str]:
    """Benchmark -> the pattern now selecting its points, for each benchmark this run wrote (its row
    started at another time than ``earlier``'s, the run's seed, says).

    asv keeps a benchmark's unselected points from the earlier run when its version is unchanged
    (``Results.add_result``), so the pattern is the union with the earlier one (``stored``: the
    seed's patterns); a benchmark without a stored pattern was written whole by an older vkbench.
    """
    out = {}
    for name, result in record.results.items():
        before = earlier.get(name)
        if before is not None and before[0] == result.started_at:
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


Seed = dict[Path, tuple[dict[str, tuple[int | None, str | None]], dict[str, float]]]
"""Per result file of a run's folder (relative to it): when asv last started each benchmark there and
its version, and the file's durations, as the folder was seeded."""


class RecordingError(RuntimeError):
    """A run's results that could not be merged into the shared folder; ``str()`` is one line naming
    the file and where the run's own results were kept."""


def _seed(root: Path, into: Path) -> Seed:
    """Copy ``root``'s result files, sidecars, ``machine.json`` files and ``benchmarks.json`` into
    ``into``; what the copied result files held."""
    into.mkdir(parents=True, exist_ok=True)
    if (root / "benchmarks.json").is_file():
        shutil.copy2(root / "benchmarks.json", into / "benchmarks.json")
    for folder in sorted(p for p in root.glob("*") if p.is_dir()) if root.is_dir() else []:
        files = [p for p in folder.iterdir() if p.is_file() and p.suffix in (".json", sidecar.SUFFIX)]
        if not any(p.suffix == ".json" for p in files):
            continue  # not a machine's folder (kept confirmation runs, ...)
        (into / folder.name).mkdir(exist_ok=True)
        for path in files:
            shutil.copy2(path, into / folder.name / path.name)
    seeded: Seed = {}
    for path in result_paths(into):
        try:
            record = read_file(path)
        except ResultFileError:
            continue  # asv will report it; the merge refuses to write over the shared one
        rows = {name: (r.started_at, r.version) for name, r in record.results.items()}
        seeded[path.relative_to(into)] = (rows, dict(record.durations))
    return seeded


def _merge_rows(record: ResultFile, target: Path, rows: set[str], seeded: dict[str, float]) -> None:
    """Write ``rows`` of ``record`` (and the durations the run changed) into ``target``; a copy of
    ``record`` where there is none. The caller holds the folder's lock."""
    if not target.exists():
        write_file(record, target)
        return
    try:
        shared = read_file(target)
    except ResultFileError as error:
        raise RecordingError(f"{error}; not written over") from None
    differ = [what for what, mine, theirs in (("commit", shared.commit, record.commit),
                                               ("env_name", shared.env_name, record.env_name))
              if mine != theirs]
    if differ:
        raise RecordingError(f"{target}: differs from this run's {record.path.name} in {', '.join(differ)}: "
                             "not one commit's results; not written over")
    shared.columns += [c for c in record.columns if c not in shared.columns]
    shared.results.update({name: record.results[name] for name in rows})
    ours = {key: value for key, value in record.durations.items() if seeded.get(key) != value}
    build = ours.get("<build>")
    if build is not None and shared.durations.get("<build>", seeded.get("<build>")) != seeded.get("<build>"):
        ours["<build>"] = max(build, shared.durations["<build>"])  # built side by side: the longer one
    shared.durations.update(ours)
    write_file(shared, target)


def merge_run(source: Path, into: Path, seed: Seed, provenance: Provenance, log: RunLog,
              per_file: Callable[[ResultFile], Provenance] | None = None) -> list[Path]:
    """Merge what a run wrote in its own folder ``source`` (seeded as ``seed`` says) into the results
    folder ``into``: per result file, the rows asv wrote and their sidecar entries, under the machine
    folder's lock; then ``benchmarks.json``. Returns the files of ``into`` written.

    ``per_file`` adds what depends on the file's commit (its release tag, the base wheel) to the
    run's provenance. Raises :class:`RecordingError` at the first file it cannot merge (the files
    before it are merged)."""
    if provenance.tier and not provenance.tier_source:
        provenance.tier_source = "recorded"
    written_files = []
    for path in result_paths(source):
        relative = path.relative_to(source)
        try:
            record = read_file(path)
        except ResultFileError as error:
            raise RecordingError(f"{error} (written by this run's asv)") from None
        earlier, durations = seed.get(relative, ({}, {}))
        written = written_patterns(record, earlier, record.sidecar.patterns, provenance.bench_pattern)
        if not written:
            continue  # not written by this run
        logged = log.for_record(record.commit, record.env_name)
        found = failures_for(record, logged.failures) + ladder_failures(record, logged.failures)
        failures = [f for f in found if f[0] in written]  # another run's rows keep their own reasons
        run = Provenance(**provenance.to_json())
        if per_file is not None:
            for key, value in per_file(record).to_json().items():
                setattr(run, key, value)
        target = into / relative
        with locks.locked(target.parent):
            machine = path.parent / "machine.json"
            if machine.is_file() and not (target.parent / "machine.json").exists():
                shutil.copy2(machine, target.parent / "machine.json")
            try:
                sidecar.read_for_update(target)  # both readable before either is written
            except sidecar.SidecarError as error:
                raise RecordingError(str(error)) from None
            _merge_rows(record, target, set(written), durations)
            sidecar.merge(target, run, failures, logged.inputs, written, logged.cpu, logged.suite_reads)
        written_files.append(target)
    listing = read_listing(source)
    if listing:
        with locks.locked(into):
            try:
                write_listing(into, {**read_listing(into), **listing})
            except ValueError as error:  # a shared benchmarks.json that is not JSON
                raise RecordingError(f"{error}; not written over") from None
    return written_files


def provenance(tier: str | None, bench_pattern: str | None, launch_method: str | None,
               **fields: str | None) -> Provenance:
    """The provenance of a run starting now (``fields``: base wheel, torch, vkbench commit, ...)."""
    return Provenance(tier=tier, bench_pattern=bench_pattern, launch_method=launch_method,
                      recorded_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), **fields)


class Recording:
    """One run being recorded: the environment to run asv with and the folder asv writes to."""

    def __init__(self, scratch: Path, env: dict[str, str]) -> None:
        self.scratch = scratch
        self.results = scratch / "results"  #: asv's ``results_dir`` for this run (seeded copy)
        self.env = env  #: ``os.environ`` with the failure log of this run
        self.written: list[Path] = []  #: the shared files the merge wrote (after the ``with`` block)
        self._configs: list[Path] = []

    def config(self, config: Path, **settings: object) -> Path:
        """A copy of asv config ``config`` writing to :attr:`results` (and ``settings``), beside it: asv
        resolves the project's clone and relative paths from the config's folder."""
        data = {**json.loads(Path(config).read_text()), "results_dir": str(self.results), **settings}
        out = Path(config).with_name(f".{self.scratch.name}-{len(self._configs)}.conf.json")
        out.write_text(json.dumps(data, indent=2) + "\n")
        self._configs.append(out)
        return out


@contextmanager
def recording(root: Path, run_provenance: Provenance,
              per_file: Callable[[ResultFile], Provenance] | None = None) -> Iterator[Recording]:
    """Around an asv run recording into ``root``: yields the :class:`Recording` (asv's environment, its
    own results folder), then merges what asv wrote there into ``root`` (:func:`merge_run`).

    The run's folder and failure log are removed after a merge; when the merge fails they are kept
    and :class:`RecordingError` says where.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="vkbench-run-"))
    run = Recording(scratch, {**os.environ, LOG_SETTING: str(scratch / "failures.jsonl")})
    seed = _seed(root, run.results)
    log = Path(run.env[LOG_SETTING])
    try:
        yield run
    finally:
        for config in run._configs:
            config.unlink(missing_ok=True)
        try:
            run.written = merge_run(run.results, root, seed, run_provenance, RunLog.read(log), per_file)
        except RecordingError as error:
            raise RecordingError(f"{error}; this run's results are kept in {run.results}") from None
        shutil.rmtree(scratch, ignore_errors=True)


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
