"""asv results recorded by the runtime classes this layer replaced, carried over.

Before :mod:`vkbench.execution`, the runtime matrix was spread over separate
asv classes per runner (``ManyVulkan``/``ManyNative``, ``StepLimit``/
``StepLimitNative``, ``PolicyRuntime``/``PolicyNative``) and eager rode along
as a ``PolicyRuntime`` backend. Their results, measured on lavapipe and the
H200, are moved here onto the classes that take the runner as a parameter,
value for value: a ``time_*`` median becomes the ``track_*_seconds`` value
(both are the median ``execute`` in seconds), stats are kept only where the
benchmark stays a timing (``ManyEager``, ``PolicyEager``). Versions are
stamped from the current suite's discovery, so asv publishes them as the
same benchmarks (``benchmarks.json`` is rewritten for the moved entries).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vkbench.results.asv_files import read_file, write_file
from vkbench.results.model import STAT_COLUMNS, BenchmarkResult


@dataclass(frozen=True)
class Move:
    """Old benchmark -> new one: ``place`` maps an old parameter tuple to the new one (None: drop)."""

    old: str
    new: str
    place: Callable[[tuple[str, ...]], tuple[str, ...] | None]
    keep_stats: bool = False
    value: Callable[[tuple[str, ...], Any], Any] = lambda params, value: value


def _runner(name: str) -> Callable[[tuple[str, ...]], tuple[str, ...] | None]:
    return lambda params: (*params, repr(name))


def _runtime_backend(name: str) -> Callable[[tuple[str, ...]], tuple[str, ...] | None]:
    return lambda params: None if params[1] == "'eager'" else (*params, repr(name))


def _per_dispatch(params: tuple[str, ...], seconds: Any) -> Any:
    return seconds if seconds is None else seconds / (2 * int(params[0])) * 1e6


MOVES = (
    Move("bench_runtime.ManyVulkan.time_execute", "bench_runtime.ManyRuntime.track_execute_seconds",
         _runner("python")),
    Move("bench_runtime.ManyVulkan.time_execute", "bench_runtime.ManyRuntime.track_us_per_dispatch",
         _runner("python"), value=_per_dispatch),
    Move("bench_runtime.ManyVulkan.track_max_abs_diff", "bench_runtime.ManyRuntime.track_max_abs_diff",
         _runner("python")),
    Move("bench_runtime.ManyNative.track_execute", "bench_runtime.ManyRuntime.track_execute_seconds",
         _runner("native")),
    Move("bench_runtime.ManyNative.track_us_per_dispatch", "bench_runtime.ManyRuntime.track_us_per_dispatch",
         _runner("native")),
    Move("bench_runtime.ManyNative.track_max_abs_diff", "bench_runtime.ManyRuntime.track_max_abs_diff",
         _runner("native")),
    Move("bench_runtime.ManyEager.time_eager", "bench_runtime.ManyEager.time_eager", lambda p: p,
         keep_stats=True),
    Move("bench_runtime.StepLimit.track_steps_short_of_cap",
         "bench_runtime.StepLimit.track_steps_short_of_cap", _runner("python")),
    Move("bench_runtime.StepLimitNative.track_steps_short_of_cap",
         "bench_runtime.StepLimit.track_steps_short_of_cap", _runner("native")),
    Move("bench_policy_runtime.PolicyRuntime.time_forward",
         "bench_policy_runtime.PolicyRuntime.track_forward_seconds", _runtime_backend("python")),
    Move("bench_policy_runtime.PolicyRuntime.time_forward", "bench_policy_runtime.PolicyEager.time_forward",
         lambda p: p[:1] if p[1] == "'eager'" else None, keep_stats=True),
    Move("bench_policy_runtime.PolicyRuntime.track_max_abs_diff",
         "bench_policy_runtime.PolicyRuntime.track_max_abs_diff", _runtime_backend("python")),
    Move("bench_policy_runtime.PolicyNative.track_forward",
         "bench_policy_runtime.PolicyRuntime.track_forward_seconds", _runner("native")),
    Move("bench_policy_runtime.PolicyNative.track_max_abs_diff",
         "bench_policy_runtime.PolicyRuntime.track_max_abs_diff", _runner("native")),
)


def discover(benchmark_dir: Path) -> dict[str, dict[str, Any]]:
    """The suite as asv would list it (name -> description, ``version`` included), via asv_runner."""
    code = ("import sys; from asv_runner.discovery import list_benchmarks; "
            "list_benchmarks(sys.argv[1], sys.stdout)")
    out = subprocess.run([sys.executable, "-c", code, str(benchmark_dir)], capture_output=True, text=True,
                         check=True, cwd=benchmark_dir.parent).stdout
    return {b["name"]: b for b in json.loads(out[out.index("["):])}


def migrate_file(path: Path, suite: dict[str, dict[str, Any]]) -> bool:
    """Move one asv result file's old runtime entries (see :data:`MOVES`); True when it changed."""
    record = read_file(path)

    def stale(name: str) -> bool:  # recorded by a replaced class, not by the current one of that name
        held = record.results.get(name)
        return held is not None and held.version != suite.get(name, {}).get("version")

    todo = [move for move in MOVES if stale(move.old)]
    if not todo:
        return False
    moved: dict[str, dict[str, Any]] = {}
    for move in todo:
        old = record.results[move.old]
        slot = moved.setdefault(move.new, {"values": {}, "stats": {}, "started_at": old.started_at,
                                           "duration": 0.0, "keep_stats": move.keep_stats})
        slot["duration"] += old.duration or 0.0
        if old.started_at is not None:
            slot["started_at"] = min(slot["started_at"] or old.started_at, old.started_at)
        grid = list(itertools.product(*old.params)) if old.params else [()]
        for index, (params, value) in enumerate(zip(grid, old.values, strict=False)):
            new_params = move.place(tuple(params))
            if new_params is None:
                continue
            slot["values"][new_params] = move.value(tuple(params), value)
            if move.keep_stats:
                slot["stats"][new_params] = [old.stat(c)[index] for c in STAT_COLUMNS]
    for name, slot in moved.items():
        target = suite[name]
        grid = list(itertools.product(*target["params"])) if target["params"] else [()]
        stats = {}
        if slot["keep_stats"]:
            stats = {column: [(slot["stats"].get(p) or [None] * len(STAT_COLUMNS))[index] for p in grid]
                     for index, column in enumerate(STAT_COLUMNS)}
        record.results[name] = BenchmarkResult(
            name, target["params"], [slot["values"].get(p) for p in grid], version=target["version"],
            started_at=slot["started_at"], duration=round(slot["duration"], 4), stats=stats)
    for move in todo:
        if move.old not in moved:
            record.results.pop(move.old, None)
    write_file(record)
    return True
