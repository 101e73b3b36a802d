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
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

# What asv does not store (a failure's reason, the CPU ops behind a count, the executorch files read)
# goes to the run log; its writer sits beside its one reader in vkbench.results.run_log,
# which holds the line format both sides share. The modules call these as ``common.note_*``.
from vkbench.results.run_log import note_cpu, note_failure, note_inputs

# The fixed parameter grids come from the suite's catalogue, the names the result readers use,
# so a renamed class or a changed grid fails tests/test_catalogue.py instead of silently
# emptying a chart. The catalogue imports nothing heavy, and its grids are fixed there, not read
# from the measured project, so every commit shares one parameter product.
from vkbench.suite.catalogue import BLOCK_SIZES, PROBE_NAMES, WORK_PHASES, WORK_SIZES  # noqa: F401 - the grids

# Each module sets ``version = suite_version(__name__)``: asv's version of its benchmarks is a digest of
# the vkbench and benchmarks/ files its records read (measured, results/history/suite-inputs.json), so
# a change of vkbench's own code starts a new series instead of reading as a step of ExecuTorch.
from vkbench.suite.identity import suite_version  # noqa: F401 - the modules' version


def version_classes(namespace: dict[str, Any]) -> None:
    """Give every benchmark class of a module (its ``globals()``) its own asv ``version``: the class's
    series is kept across a suite change only where an equivalence record re-measured it equal, so
    one module can keep some classes' series and restart others' (``vkbench.suite.equivalence``)."""
    name = namespace["__name__"]
    for cls_name, cls in namespace.items():
        if isinstance(cls, type) and not cls_name.startswith("_") and cls.__module__ == name:
            cls.version = suite_version(name, cls_name)


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


def et_count(record: dict[str, Any], key: str) -> int:
    """A lowering record's ExecuTorch count (``get_delegation_info``'s ``et_delegated_nodes`` or
    ``et_non_delegated_nodes``), or asv's skip where this ExecuTorch cannot give it."""
    value = record.get(key)
    if value is None:
        skip("executorch.devtools.backend_debug.get_delegation_info is unavailable at this commit")
    return value


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
    note_inputs("bench_probes")
    return record


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
