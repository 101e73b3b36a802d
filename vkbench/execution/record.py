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
from vkbench.execution.measure import measure_isolated
from vkbench.execution.outcome import Outcome
from vkbench.execution.runners import runner


def key(workload: str, backend: str, runner_name: str) -> str:
    return f"{workload}|{backend}|{runner_name}"


def record(workloads: Sequence[str], backends: Sequence[str], runners: Sequence[str]) -> dict[str, Any]:
    """``{"outcomes": {key: Outcome JSON}}`` for every combination, each workload in one child."""
    outcomes: dict[str, Any] = {}
    ready = {(b, r): runner(r).ready(b) for b in backends for r in runners}
    for workload in workloads:
        for (backend, runner_name), (ok, reason) in ready.items():
            if not ok:
                outcome = Outcome(workload, backend, runner_name).fail("runtime", reason)
                outcomes[key(workload, backend, runner_name)] = outcome.to_json()
        live_backends = [b for b in backends if any(ready[b, r][0] for r in runners)]
        live_runners = [r for r in runners if any(ready[b, r][0] for b in backends)]
        if not live_backends:
            continue
        for outcome in measure_isolated(workload, live_backends, live_runners):
            slot = key(workload, outcome.backend, outcome.runner)
            outcomes.setdefault(slot, outcome.to_json())
    return {"outcomes": outcomes}


def rungs_short(cache: dict[str, Any], workload: str, backend: str, runner_name: str) -> int:
    """Ladder rungs one combination missed (0: matches eager; 4: did not lower).

    ``NotImplementedError`` (asv: skipped) only where the runner could not
    run here at all: a lowering or runtime failure is a measured rung.
    """
    outcome = cache["outcomes"].get(key(workload, backend, runner_name))
    if outcome is None:
        raise NotImplementedError(f"{workload} on {backend} with the {runner_name} runner was not recorded")
    if outcome["stage"] in ("runtime", MISSING):  # nothing was tried: no runner, or no program here
        raise NotImplementedError(f"{runner_name} runner: {outcome['error']}")
    return Outcome.from_json(outcome).rungs_short


def require(cache: dict[str, Any], workload: str, backend: str, runner_name: str) -> dict[str, Any]:
    """The outcome JSON of one combination, or ``NotImplementedError`` saying why it did not run."""
    outcome = cache["outcomes"].get(key(workload, backend, runner_name))
    if outcome is None:
        raise NotImplementedError(f"{workload} on {backend} with the {runner_name} runner was not recorded")
    if not outcome["ok"]:
        raise NotImplementedError(f"{workload} on {backend} ({runner_name} runner): "
                                  f"{outcome['stage']}: {outcome['error']}")
    return outcome
