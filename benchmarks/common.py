"""Shared inputs and the one import guard of the benchmark modules.

asv imports this suite for every ExecuTorch commit it measures: an old
commit lacking something must skip the affected benchmarks
(``NotImplementedError``), not break discovery. Workloads are processed once
per commit (its *record*); benchmark methods only read the record, so asv's
launch method ``forkserver`` (suite imported once, each benchmark forked)
makes them nearly free. A record lives either in a class's ``setup_cache``
(the probes: all are needed together) or, where tiers select parameters
or classes that share work, in a :func:`shared_record` file made by the
first benchmark that needs it.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import re
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

# The fixed parameter grids come from the suite's catalogue, the names the result readers use,
# so a renamed class or a changed grid fails tests/test_catalogue.py instead of silently
# emptying a chart. The catalogue imports nothing heavy, and its grids are fixed there, not read
# from the measured project, so every commit shares one parameter product.
from vkbench.suite.catalogue import BLOCK_SIZES, PROBE_NAMES  # noqa: F401 - the modules' grids


def quiet() -> None:
    """Silence the partitioner's INFO lines and torch's deprecation chatter."""
    logging.getLogger().setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)


def safe_import(name: str) -> tuple[ModuleType | None, str | None]:
    """``(module, None)``, or ``(None, "Error: message")`` when importing fails at this commit.

    The one import guard of the suite: a module that cannot import makes its
    benchmarks skip with this reason instead of breaking asv's discovery.
    """
    try:
        return importlib.import_module(name), None
    except Exception as error:  # noqa: BLE001 - any failure means "skip", with the reason
        return None, f"{type(error).__name__}: {error}"


quiet()
probes, IMPORT_ERROR = safe_import("vkbench.workloads.probes")  # imports the lowering path (and executorch)
quiet()  # importing the Vulkan partitioner set the root logger to INFO


def skip(reason: str) -> NoReturn:
    """asv's way to skip: the reason shows in ``asv run`` output and the results."""
    raise NotImplementedError(reason)


def require_import(error: str | None, module: str) -> None:
    """Quiet the loggers, and skip when ``module`` failed to import at this commit (``error``)."""
    quiet()
    if error is not None:
        skip(f"{module} cannot import here: {error}")


def require_vkbench() -> None:
    if IMPORT_ERROR is not None:
        skip(f"vkbench cannot import here: {IMPORT_ERROR}")


def lower_probe(name: str) -> dict[str, Any]:
    """Coverage of one probe as JSON, or ``{"error": ...}`` when lowering fails."""
    require_vkbench()
    record = probes.probe_coverage(name)
    if "error" in record:
        note_failure("probe", name, record.get("failed_stage") or "lower", record["error"])
    else:
        note_cpu("probe", name, record)
    note_inputs()
    return record


def _log(line: dict[str, Any]) -> None:
    """Append one line to ``$VKBENCH_FAILURE_LOG``, tagged with the commit and environment asv runs
    (``ASV_COMMIT``, ``ASV_ENV_NAME``); without the variable (plain ``asv run``) nothing is written.

    ``vkbench record`` and ``vkbench upstream`` set it and store what it holds beside asv's result
    files (:mod:`vkbench.results.recording`). One short append per line: safe across processes.
    """
    log = os.environ.get("VKBENCH_FAILURE_LOG", "").strip()
    if not log:
        return
    tagged = {"commit": os.environ.get("ASV_COMMIT", ""), "env": os.environ.get("ASV_ENV_NAME", ""), **line}
    with open(log, "a", encoding="utf-8") as out:
        out.write(json.dumps(tagged) + "\n")


_NOTED_INPUTS: set[str] = set()


def note_inputs() -> None:
    """Log the ``executorch`` modules this process has imported so far (new ones only).

    A commit whose lowering imports a module outside its class's input set
    (:mod:`vkbench.commits.fingerprint`) shows it here; ``vkbench history classes``
    then widens the set and re-classifies. Same log, same switch as :func:`note_failure`.
    """
    log = os.environ.get("VKBENCH_FAILURE_LOG", "").strip()
    if not log or "executorch" not in sys.modules:
        return
    root = Path(next(iter(sys.modules["executorch"].__path__))).resolve()
    files = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and Path(path).resolve().is_relative_to(root):
            files.add(f"{root.name}/{Path(path).resolve().relative_to(root).as_posix()}")
    new = files - _NOTED_INPUTS
    if not new:
        return
    _NOTED_INPUTS.update(new)
    _log({"kind": "inputs", "files": sorted(new)})


def note_failure(kind: str, workload: str, stage: str, error: str) -> None:
    """Keep why a workload failed: asv stores its points as NaN and prints the reason only on stderr.

    One JSON line per failed workload in the run's log (:func:`_log`).
    """
    _log({"kind": kind, "workload": workload, "stage": stage, "error": str(error)})


def note_cpu(kind: str, workload: str, coverage: dict[str, Any]) -> None:
    """Keep what the partitioner left on the CPU and why (``op -> nodes, reason -> nodes``).

    asv stores only the counts; a step in a count is explained by the ops and reasons that
    changed between the two commits (``vkbench changes``).
    """
    reasons = coverage.get("reasons_by_op") or {}
    cpu = {op: {"nodes": int(nodes), "reasons": reasons.get(op, {})}
           for op, nodes in (coverage.get("cpu_ops") or {}).items()}
    _log({"kind": "cpu", "workload_kind": kind, "workload": workload, "cpu": cpu})


def cache_directory() -> str:
    """What a module's ``setup_cache`` returns to share records: asv's directory for that cache.

    asv creates one directory per ``setup_cache`` for the whole run of a
    commit and runs every benchmark using that cache inside it.
    """
    return str(Path.cwd().resolve())


def record_path(directory: str, key: str) -> Path:
    return Path(directory) / (re.sub(r"[^\w.-]", "_", key) + ".json")


def shared_record(directory: str, key: str, make: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The record ``key`` from ``directory``; the first caller makes and writes it.

    Benchmarks of one module run one after another (asv runs a cache's
    users in name order), so a workload is processed once per commit by
    whichever benchmark needs it first, in that benchmark's own process.
    """
    path = record_path(directory, key)
    if path.is_file():
        return json.loads(path.read_text())
    record = make()
    path.write_text(json.dumps(record))
    return record
