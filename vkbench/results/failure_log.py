"""The suite's failure log: what a benchmark process knows and asv does not store, one JSON line each.

asv keeps a failed point as NaN and prints its reason only on stderr; it keeps a CPU-op count but not
the ops and the partitioner's reasons behind it, nor which ``executorch`` files the lowering read, nor
which vkbench files a record read outside the list its benchmarks' version covers
(:mod:`vkbench.suite.identity`).
The benchmark processes append those here (the writer, called by ``benchmarks/common.py``), and
:func:`vkbench.results.recording.recording` reads them back after the run (the readers) and stores
them in the sidecars. Writer and readers share this module because they share the line format::

    {"commit": ASV_COMMIT, "env": ASV_ENV_NAME, "kind": "probe" | "policy", "workload": ..., "stage": ...,
     "error": ...}
    {"commit": ..., "env": ..., "kind": "inputs", "files": ["executorch/exir/__init__.py", ...]}
    {"commit": ..., "env": ..., "kind": "suite", "module": "bench_probes", "files": ["vkbench/...", ...]}
    {"commit": ..., "env": ..., "kind": "cpu", "workload_kind": "probe", "workload": ..., "cpu": {op: ...}}

Recorded sidecars were made from exactly these lines: the format changes only with a reader that
still reads the old one. The log's path is the setting :data:`LOG_SETTING`; without it (a plain
``asv run``) nothing is written.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vkbench import settings
from vkbench.results.failure_key import normalize_error
from vkbench.results.model import CpuOps, Failure
from vkbench.suite import identity
from vkbench.suite.reads import module_files

#: The setting naming the log file (``vkbench record`` and ``vkbench upstream`` set it for asv).
LOG_SETTING = "VKBENCH_FAILURE_LOG"
#: Failure-log kind -> the benchmark module whose workloads it names.
KIND_MODULES = {"probe": "bench_probes", "policy": "bench_policies"}
#: The log's lines of this kind list ``executorch`` files the run read (:func:`note_inputs`).
INPUTS_KIND = "inputs"
#: The log's lines of this kind hold a lowered workload's CPU ops and reasons (:func:`note_cpu`).
CPU_KIND = "cpu"
#: The log's lines of this kind list vkbench files a module's records read outside its stored list.
SUITE_KIND = "suite"

WorkloadFailures = dict[tuple[str, str], Failure]  #: (kind, workload) -> failure
WorkloadCpu = dict[tuple[str, str], CpuOps]  #: (benchmark module, workload) -> CPU ops
RunKey = tuple[str, str]  #: (commit, asv environment) a line was written under


# -- the writer (in the benchmark processes) ----------------------------------------------------------

def _log_path() -> str:
    return settings.text(LOG_SETTING)


def _append(line: dict[str, Any]) -> None:
    """Append one line, tagged with the commit and environment asv runs (``ASV_COMMIT``,
    ``ASV_ENV_NAME``: asv's variables, not vkbench settings). One short append per line: safe
    across the processes of a run."""
    log = _log_path()
    if not log:
        return
    tagged = {"commit": os.environ.get("ASV_COMMIT", ""), "env": os.environ.get("ASV_ENV_NAME", ""), **line}
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
            _append({"kind": INPUTS_KIND, "files": sorted(new)})
    if module:
        trees = list(identity.roots().values())
        later = [m for name, m in list(sys.modules.items()) if name not in _AT_FORK]
        new = identity.unlisted(module, module_files(trees), module_files(trees, later)) - _NOTED_INPUTS
        if new:
            _NOTED_INPUTS.update(new)
            _append({"kind": SUITE_KIND, "module": module, "files": sorted(new)})


def note_failure(kind: str, workload: str, stage: str, error: str) -> None:
    """Keep why a workload failed: asv stores its points as NaN and prints the reason only on stderr."""
    _append({"kind": kind, "workload": workload, "stage": stage, "error": str(error)})


def note_cpu(kind: str, workload: str, coverage: dict[str, Any]) -> None:
    """Keep what the partitioner left on the CPU and why (``op -> nodes, reason -> nodes``).

    asv stores only the counts; a step in a count is explained by the ops and reasons that
    changed between the two commits (``vkbench changes``).
    """
    reasons = coverage.get("reasons_by_op") or {}
    cpu = {op: {"nodes": int(nodes), "reasons": reasons.get(op, {})}
           for op, nodes in (coverage.get("cpu_ops") or {}).items()}
    _append({"kind": CPU_KIND, "workload_kind": kind, "workload": workload, "cpu": cpu})


# -- the readers (in vkbench, after the run) ----------------------------------------------------------

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


def read_failure_log(path: Path) -> dict[RunKey, WorkloadFailures]:
    """``(commit, env) -> (kind, workload) -> Failure`` (its error as the failure key); bad lines skipped."""
    found: dict[RunKey, WorkloadFailures] = {}
    for item in _items(path):
        if item.get("kind") in (INPUTS_KIND, CPU_KIND, SUITE_KIND):
            continue
        try:
            failure = Failure(str(item["stage"]), normalize_error(str(item["stage"]), str(item["error"])))
            key = (str(item["commit"]), str(item["env"]))
            found.setdefault(key, {})[(str(item["kind"]), str(item["workload"]))] = failure
        except KeyError:
            continue
    return found


def read_inputs_log(path: Path) -> dict[RunKey, set[str]]:
    """``(commit, env) -> wheel paths read`` (lines of kind ``inputs``)."""
    found: dict[RunKey, set[str]] = {}
    for item in _items(path):
        if item.get("kind") == INPUTS_KIND and isinstance(item.get("files"), list):
            key = (str(item.get("commit", "")), str(item.get("env", "")))
            found.setdefault(key, set()).update(map(str, item["files"]))
    return found


def read_cpu_log(path: Path) -> dict[RunKey, WorkloadCpu]:
    """``(commit, env) -> (benchmark module, workload) -> CPU ops`` (lines of kind ``cpu``)."""
    found: dict[RunKey, WorkloadCpu] = {}
    for item in _items(path):
        module = KIND_MODULES.get(str(item.get("workload_kind")))
        if item.get("kind") != CPU_KIND or module is None or not isinstance(item.get("cpu"), dict):
            continue
        key = (str(item.get("commit", "")), str(item.get("env", "")))
        found.setdefault(key, {})[(module, str(item.get("workload")))] = item["cpu"]
    return found


def read_suite_log(path: Path) -> dict[RunKey, dict[str, set[str]]]:
    """``(commit, env) -> benchmark module -> vkbench files read outside its list`` (kind ``suite``)."""
    found: dict[RunKey, dict[str, set[str]]] = {}
    for item in _items(path):
        if item.get("kind") == SUITE_KIND and isinstance(item.get("files"), list) and item.get("module"):
            key = (str(item.get("commit", "")), str(item.get("env", "")))
            found.setdefault(key, {}).setdefault(str(item["module"]), set()).update(map(str, item["files"]))
    return found
