"""What the runtime benchmarks record once per commit, and how a benchmark reads it.

asv's ``setup_cache`` calls :func:`record` (every workload × backend × runner
through the isolated child, nothing lowered for a runner that cannot execute
here); each benchmark method then reads one outcome with :func:`require`,
which raises ``NotImplementedError`` (asv: skipped) with the stage and error
where that combination did not run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vkbench.execution.bundle import MISSING
from vkbench.execution.measure import measure_isolated, unready
from vkbench.execution.outcome import Outcome
from vkbench.results.ladder import MISMATCH_STAGE, mismatch_line, note_outcome


def key(workload: str, backend: str, runner_name: str) -> str:
    return f"{workload}|{backend}|{runner_name}"


def record(workloads: Sequence[str], backends: Sequence[str], runners: Sequence[str]) -> dict[str, Any]:
    """``{"outcomes": {key: Outcome JSON}}`` for every combination, each workload in one child.

    Where no runner here can execute any combination, no child is started (nothing is lowered).
    """
    outcomes: dict[str, Any] = {}
    for workload in workloads:
        skipped = unready(workload, backends, runners)
        runs = (measure_isolated(workload, backends, runners) if len(skipped) < len(backends) * len(runners)
                else skipped.values())
        for outcome in runs:
            outcomes[key(workload, outcome.backend, outcome.runner)] = outcome.to_json()
            if not outcome.ok:  # the reason beside asv's value (a rung says where, not why)
                note_outcome(workload, outcome.backend, outcome.runner, outcome.stage, outcome.error)
            elif outcome.runner and outcome.reached == "runs":  # ran, finite, but not eager's output
                note_outcome(workload, outcome.backend, outcome.runner, MISMATCH_STAGE,
                             mismatch_line(outcome.max_abs_diff, outcome.snr_db))
    return {"outcomes": outcomes}


def _recorded(cache: dict[str, Any], workload: str, backend: str, runner_name: str) -> dict[str, Any]:
    outcome = cache["outcomes"].get(key(workload, backend, runner_name))
    if outcome is None:
        raise NotImplementedError(f"{workload} on {backend} with the {runner_name} runner was not recorded")
    return outcome


def rungs_short(cache: dict[str, Any], workload: str, backend: str, runner_name: str) -> int:
    """Ladder rungs one combination missed (0: matches eager; 4: did not lower).

    ``NotImplementedError`` (asv: skipped) only where the runner could not
    run here at all: a lowering or runtime failure is a measured rung.
    """
    outcome = _recorded(cache, workload, backend, runner_name)
    if outcome["stage"] in ("runtime", MISSING):  # nothing was tried: no runner, or no program here
        raise NotImplementedError(f"{runner_name} runner: {outcome['error']}")
    return Outcome.from_json(outcome).rungs_short


def require(cache: dict[str, Any], workload: str, backend: str, runner_name: str) -> dict[str, Any]:
    """The outcome JSON of one combination, or ``NotImplementedError`` saying why it did not run."""
    outcome = _recorded(cache, workload, backend, runner_name)
    if not outcome["ok"]:
        raise NotImplementedError(f"{workload} on {backend} ({runner_name} runner): "
                                  f"{outcome['stage']}: {outcome['error']}")
    return outcome
