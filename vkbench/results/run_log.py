"""A recording's run log: what a benchmark process knows and asv does not store, one typed entry a line.

asv keeps a failed point as NaN and prints its reason only on stderr; it keeps a CPU-op count but not
the ops and the partitioner's reasons behind it, nor which ``executorch`` files the lowering read, nor
which vkbench files a record read outside the list its benchmarks' version covers
(:mod:`vkbench.suite.identity`).
The benchmark processes append those here as entries (:class:`FailureEntry`, :class:`InputsEntry`,
:class:`SuiteEntry`, :class:`CpuEntry`; :func:`write`, called by ``benchmarks/common.py``), and after the
run :meth:`RunLog.read` (the one reader) turns the log into one :class:`RunLog`, whose
:meth:`RunLog.for_record` is what :func:`vkbench.results.recording.recording` stores in each result file's
sidecar. Writer and reader share this module because they share the line format::

    {"commit": ASV_COMMIT, "env": ASV_ENV_NAME, "kind": "probe" | "policy", "workload": ..., "stage": ...,
     "error": ...}
    {"commit": ..., "env": ..., "kind": "inputs", "files": ["executorch/exir/__init__.py", ...]}
    {"commit": ..., "env": ..., "kind": "suite", "module": "bench_probes", "files": ["vkbench/...", ...]}
    {"commit": ..., "env": ..., "kind": "cpu", "workload_kind": "probe", "workload": ..., "cpu": {op: ...}}

Recorded sidecars were made from exactly these lines: the format changes only with a reader that
still reads the old one. The log's path is the setting :data:`LOG_SETTING` (its name is older than the
log's other kinds of entry); without it (a plain ``asv run``) nothing is written.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vkbench import settings
from vkbench.results.failure_key import normalize_error
from vkbench.results.model import CpuOps, Failure
from vkbench.suite import identity
from vkbench.suite.reads import module_files

#: The setting naming the log file (``vkbench record`` and ``vkbench upstream`` set it for asv).
LOG_SETTING = "VKBENCH_FAILURE_LOG"
#: A workload kind -> the benchmark module whose workloads it names.
KIND_MODULES = {"probe": "bench_probes", "policy": "bench_policies"}
#: The log's lines of this kind list ``executorch`` files the run read (:class:`InputsEntry`).
INPUTS_KIND = "inputs"
#: The log's lines of this kind hold a lowered workload's CPU ops and reasons (:class:`CpuEntry`).
CPU_KIND = "cpu"
#: The log's lines of this kind list vkbench files a module's records read outside its stored list.
SUITE_KIND = "suite"

WorkloadFailures = dict[tuple[str, str], Failure]  #: (kind, workload) -> failure
WorkloadCpu = dict[tuple[str, str], CpuOps]  #: (benchmark module, workload) -> CPU ops
RunKey = tuple[str, str]  #: (commit, asv environment) a line was written under


@dataclass(frozen=True)
class FailureEntry:
    """A workload that failed: its kind (``probe``, ``policy``, a runtime kind), the stage, the error."""

    kind: str
    workload: str
    stage: str
    error: str

    def line(self) -> dict[str, Any]:
        return {"kind": self.kind, "workload": self.workload, "stage": self.stage, "error": self.error}


@dataclass(frozen=True)
class InputsEntry:
    """``executorch`` files the process read that it had not logged yet."""

    files: tuple[str, ...]

    def line(self) -> dict[str, Any]:
        return {"kind": INPUTS_KIND, "files": list(self.files)}


@dataclass(frozen=True)
class SuiteEntry:
    """vkbench files benchmark module ``module``'s records read outside its stored list."""

    module: str
    files: tuple[str, ...]

    def line(self) -> dict[str, Any]:
        return {"kind": SUITE_KIND, "module": self.module, "files": list(self.files)}


@dataclass(frozen=True)
class CpuEntry:
    """What the partitioner left on the CPU of a lowered workload, and why (``op -> nodes, reasons``)."""

    workload_kind: str
    workload: str
    cpu: dict[str, Any]

    def line(self) -> dict[str, Any]:
        return {"kind": CPU_KIND, "workload_kind": self.workload_kind, "workload": self.workload,
                "cpu": self.cpu}


Entry = FailureEntry | InputsEntry | SuiteEntry | CpuEntry


# -- the writer (in the benchmark processes) ----------------------------------------------------------

def _log_path() -> str:
    return settings.text(LOG_SETTING)


def write(entry: Entry) -> None:
    """Append one entry as a line, tagged with the commit and environment asv runs (``ASV_COMMIT``,
    ``ASV_ENV_NAME``: asv's variables, not vkbench settings). One short append per line: safe
    across the processes of a run."""
    log = _log_path()
    if not log:
        return
    tagged = {"commit": os.environ.get("ASV_COMMIT", ""), "env": os.environ.get("ASV_ENV_NAME", ""),
              **entry.line()}
    with open(log, "a", encoding="utf-8") as out:
        out.write(json.dumps(tagged) + "\n")


#: Files this process has already logged (a forked benchmark inherits the parent's).
_NOTED_INPUTS: set[str] = set()
#: ``sys.modules``' names when asv's server forked this benchmark process (empty when not forked):
#: what was imported later was imported by this process's own benchmark.
_AT_FORK: frozenset[str] = frozenset()


def _forked() -> None:
    global _AT_FORK
    _AT_FORK = frozenset(sys.modules)


os.register_at_fork(after_in_child=_forked)


def note_inputs(module: str = "") -> None:
    """Log the ``executorch`` modules this process has imported so far, and the vkbench files
    benchmark module ``module``'s records read outside its stored list (new ones only).

    A commit whose lowering imports a module outside its class's input set
    (:mod:`vkbench.commits.fingerprint`) shows it here; ``vkbench history classes``
    then widens the set and re-classifies. Likewise a vkbench file outside the module's list
    (:func:`vkbench.suite.identity.unlisted`) is widened into it by ``vkbench history suite-inputs``.
    Same log, same switch as :func:`note_failure`.
    """
    if not _log_path():
        return
    if "executorch" in sys.modules:
        root = Path(next(iter(sys.modules["executorch"].__path__))).resolve()
        new = module_files([root]) - _NOTED_INPUTS
        if new:
            _NOTED_INPUTS.update(new)
            write(InputsEntry(tuple(sorted(new))))
    if module:
        trees = list(identity.roots().values())
        later = [m for name, m in list(sys.modules.items()) if name not in _AT_FORK]
        new = identity.unlisted(module, module_files(trees), module_files(trees, later)) - _NOTED_INPUTS
        if new:
            _NOTED_INPUTS.update(new)
            write(SuiteEntry(module, tuple(sorted(new))))


def note_failure(kind: str, workload: str, stage: str, error: str) -> None:
    """Keep why a workload failed: asv stores its points as NaN and prints the reason only on stderr."""
    write(FailureEntry(kind, workload, stage, str(error)))


def note_cpu(kind: str, workload: str, coverage: dict[str, Any]) -> None:
    """Keep what the partitioner left on the CPU and why (``op -> nodes, reason -> nodes``).

    asv stores only the counts; a step in a count is explained by the ops and reasons that
    changed between the two commits (``vkbench changes``).
    """
    reasons = coverage.get("reasons_by_op") or {}
    cpu = {op: {"nodes": int(nodes), "reasons": reasons.get(op, {})}
           for op, nodes in (coverage.get("cpu_ops") or {}).items()}
    write(CpuEntry(kind, workload, cpu))


# -- the reader (in vkbench, after the run) ------------------------------------------------------------

def _items(path: Path) -> Iterator[dict[str, Any]]:
    """The log's JSON lines, each an object; lines that are not (a killed writer) are skipped."""
    if not path.is_file():
        return
    for line in path.read_text(errors="replace").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            yield item


def _files(item: dict[str, Any]) -> tuple[str, ...] | None:
    files = item.get("files")
    return tuple(map(str, files)) if isinstance(files, list) else None


def parse(item: dict[str, Any]) -> tuple[RunKey, Entry] | None:
    """A line as ``((commit, env), entry)``; None for one that is not a whole entry (it is skipped)."""
    key = (str(item.get("commit", "")), str(item.get("env", "")))
    kind = item.get("kind")
    if kind == INPUTS_KIND:
        files = _files(item)
        return (key, InputsEntry(files)) if files is not None else None
    if kind == SUITE_KIND:
        files = _files(item)
        return (key, SuiteEntry(str(item["module"]), files)) if files is not None and item.get("module") \
            else None
    if kind == CPU_KIND:
        cpu = item.get("cpu")
        return (key, CpuEntry(str(item.get("workload_kind")), str(item.get("workload")), cpu)) \
            if isinstance(cpu, dict) else None
    if not all(name in item for name in ("commit", "env", "kind", "workload", "stage", "error")):
        return None
    return key, FailureEntry(str(kind), str(item["workload"]), str(item["stage"]), str(item["error"]))


@dataclass
class RecordLog:
    """The run log's entries for one result file (its commit and environment)."""

    failures: WorkloadFailures = field(default_factory=dict)
    inputs: set[str] = field(default_factory=set)
    cpu: WorkloadCpu = field(default_factory=dict)
    suite_reads: dict[str, set[str]] = field(default_factory=dict)


@dataclass
class RunLog:
    """What one run's log says, per ``(commit, env)``: the workloads that failed (their error as the
    failure key), the ExecuTorch files the lowerings read, each lowered workload's CPU ops (by benchmark
    module), and the vkbench files each benchmark module read outside its list."""

    failures: dict[RunKey, WorkloadFailures] = field(default_factory=dict)
    inputs: dict[RunKey, set[str]] = field(default_factory=dict)
    cpu: dict[RunKey, WorkloadCpu] = field(default_factory=dict)
    suite_reads: dict[RunKey, dict[str, set[str]]] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> RunLog:
        """The log at ``path`` (empty when there is none); lines that are not whole entries are skipped."""
        log = cls()
        for item in _items(Path(path)):
            parsed = parse(item)
            if parsed is not None:
                log.add(*parsed)
        return log

    def add(self, key: RunKey, entry: Entry) -> None:
        if isinstance(entry, InputsEntry):
            self.inputs.setdefault(key, set()).update(entry.files)
        elif isinstance(entry, SuiteEntry):
            self.suite_reads.setdefault(key, {}).setdefault(entry.module, set()).update(entry.files)
        elif isinstance(entry, CpuEntry):
            module = KIND_MODULES.get(entry.workload_kind)
            if module is not None:
                self.cpu.setdefault(key, {})[(module, entry.workload)] = entry.cpu
        else:
            failure = Failure(entry.stage, normalize_error(entry.stage, entry.error))
            self.failures.setdefault(key, {})[(entry.kind, entry.workload)] = failure

    def for_record(self, commit: str, env_name: str) -> RecordLog:
        """The entries of a result file's commit and environment (an installed release runs as
        ``existing`` with its commit set by vkbench, so an empty ``ASV_COMMIT`` matches any commit)."""
        def mine(key: RunKey) -> bool:
            return key[0] in ("", commit) and key[1] in ("", env_name)

        out = RecordLog()
        for key, failures in self.failures.items():  # in the log's order: a later line wins
            if mine(key):
                out.failures.update(failures)
        for key, files in self.inputs.items():
            if mine(key):
                out.inputs.update(files)
        for key, cpu in self.cpu.items():
            if mine(key):
                out.cpu.update(cpu)
        for key, reads in self.suite_reads.items():
            if mine(key):
                out.suite_reads.update(reads)
        return out
