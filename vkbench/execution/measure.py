"""Measure workloads: prepare a bundle, execute it per backend with a runner, one Outcome each.

:func:`measure` works in this process. :func:`measure_isolated` does the same
in a child process (``python -m vkbench.execution.child``), which prints one
JSON line per finished outcome: a Vulkan ``VK_CHECK`` can abort the process,
and an abort or a hang must become a failed outcome (stage ``crash`` or
``timeout``) for the backends not yet finished, not the end of a benchmark
run. This is the one child protocol of the runtime suite: ``Many(n)``
step-limit probes and policy entries alike.
"""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from vkbench import settings
from vkbench.execution.bundle import Bundle, prepare
from vkbench.execution.outcome import Outcome, compare
from vkbench.execution.runners import RunFailed, runner

#: The error of an outcome reported while its runner is still at work (``progress``).
PENDING = "(still running)"


def execute(bundle: Bundle, backend: str, runner_name: str,
            progress: Callable[[Outcome], None] | None = None) -> Outcome:
    """Run ``bundle``'s ``backend`` program with the named runner; never raises for a failure.

    ``progress`` gets the outcome as it would read if the process died now
    (stage ``load``, then ``execute`` once the program loaded, error
    :data:`PENDING`): an abort inside the Python runtime ends the process, and
    :func:`measure_isolated` then still knows the program lowered and where it stopped.
    """
    lowered = bundle.lowering.get(backend)
    if lowered is None:
        return Outcome(bundle.workload, backend, runner_name).fail("lower", f"{backend} was not prepared")
    outcome = copy.deepcopy(lowered)
    outcome.runner = runner_name
    if not lowered.ok:  # stopped while building or lowering: the bundle says where
        return outcome
    outcome.ok = False
    chosen = runner(runner_name)
    ready, reason = chosen.ready(backend)
    if not ready:
        return outcome.fail("runtime", reason)
    def pending(stage: str) -> None:
        if progress is not None:
            progress(copy.deepcopy(outcome).fail(stage, PENDING))

    pending("load")
    try:
        run = chosen.run(bundle.programs[backend], bundle.inputs, loaded=lambda: pending("execute"))
    except RunFailed as failed:
        return outcome.fail(failed.stage, failed.error)
    outcome.seconds["load"] = round(run.load_s, 4)
    if run.first_execute_s is not None:
        outcome.seconds["first_execute"] = round(run.first_execute_s, 4)
    try:
        outcome.max_abs_diff, outcome.snr_db, outcome.float_outputs = compare(run.outputs, bundle.expected)
    except ValueError as error:
        return outcome.fail("compare", str(error))
    if not math.isfinite(outcome.max_abs_diff):
        return outcome.fail("compare", "non-finite output")
    outcome.execute_s = round(run.median_s, 6)
    outcome.execute_min_s = round(min(run.execute_s), 6)
    outcome.repeats = len(run.execute_s)
    outcome.ok = True
    return outcome


def unready(workload: str, backends: Sequence[str], runners: Sequence[str]) -> dict[tuple[str, str], Outcome]:
    """``(backend, runner) -> runtime failure`` for the combinations no runner here can execute."""
    outcomes = {}
    for runner_name in runners:
        chosen = runner(runner_name)
        for backend in backends:
            ready, reason = chosen.ready(backend)
            if not ready:
                failed = Outcome(workload, backend, runner_name).fail("runtime", reason)
                outcomes[backend, runner_name] = failed
    return outcomes


def measure(
    workload: str,
    backends: Sequence[str],
    runners: Sequence[str],
    *,
    report: Callable[[Outcome], None] | None = None,
    progress: Callable[[Outcome], None] | None = None,
    delegate_only: Sequence[str] | None = None,
) -> list[Outcome]:
    """Prepare ``workload`` once and execute it for each backend with each runner; never raises.

    Combinations the runner cannot execute here are not lowered (their
    outcome is a ``runtime`` failure with the reason), so a machine without a
    Vulkan runtime spends no time on them. ``report`` gets each outcome as it
    finishes, ``progress`` each one still running (:func:`execute`); ``delegate_only``
    goes to :func:`~vkbench.execution.bundle.prepare`. Runners that work in this
    process run last, since an abort there ends it. Outcomes come back backend-major:
    ``[(b, r) for b in backends for r in runners]``.
    """
    outcomes = unready(workload, backends, runners)
    if report:
        for outcome in outcomes.values():
            report(outcome)
    live = [b for b in backends if any((b, r) not in outcomes for r in runners)]
    if live:
        bundle = prepare(workload, live, delegate_only=delegate_only)
        for runner_name in sorted(runners, key=lambda name: runner(name).in_process):
            for backend in live:
                if (backend, runner_name) not in outcomes:
                    outcomes[backend, runner_name] = execute(bundle, backend, runner_name, progress)
                    if report:
                        report(outcomes[backend, runner_name])
    return [outcomes[b, r] for b in backends for r in runners]


def child_env() -> dict[str, str]:
    """This environment with the checkout first on ``PYTHONPATH`` (for ``python -m vkbench...`` children)."""
    import os

    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def measure_isolated(
    workload: str, backends: Sequence[str], runners: Sequence[str], *, timeout: float | None = None,
    delegate_only: Sequence[str] | None = None,
) -> list[Outcome]:
    """:func:`measure` in a child process: an abort or a hang becomes a failed outcome.

    Outcomes the child finished before a crash keep their results; the one it
    was running keeps its lowering and the stage it had reached (``load`` or
    ``execute``) with the child's last error line; the rest get stage
    ``crash`` (with that line) or ``timeout``.
    """
    command = [sys.executable, "-m", "vkbench.execution.child", workload, "--runner", *runners,
               "--backend", *backends]
    if delegate_only is not None:
        command += ["--delegate-only", ",".join(delegate_only)]
    timeout = settings.number("VKBENCH_RUN_TIMEOUT") if timeout is None else timeout
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=child_env())
        stdout, failure = result.stdout, None
    except subprocess.TimeoutExpired as expired:
        out = expired.stdout or ""
        stdout = out.decode(errors="replace") if isinstance(out, bytes) else out
        failure, result = ("timeout", f"{workload} took over {timeout:.0f}s"), None
    finished = {}
    for line in stdout.splitlines():
        if line.startswith("{"):
            outcome = Outcome.from_json(json.loads(line))
            finished[outcome.backend, outcome.runner] = outcome
    if failure is None and result is not None:
        tail = [ln for ln in result.stderr.strip().splitlines() if ln.strip()]
        detail = next((ln for ln in reversed(tail) if "Error" in ln or "error" in ln or "VK_" in ln
                       or "QueryPool" in ln), None)
        failure = ("crash", f"exit {result.returncode}: {(detail or (tail[-1] if tail else ''))[:500]}")
    return [_settle(finished.get((b, r)), Outcome(workload, b, r), failure)  # type: ignore[arg-type]
            for b in backends for r in runners]


def _settle(reported: Outcome | None, blank: Outcome, failure: tuple[str, str]) -> Outcome:
    """The child's last word on one combination, with the child's own failure where it stopped there."""
    if reported is not None and reported.error != PENDING:
        return reported
    if reported is None:
        return blank.fail(*failure)
    return reported.fail(reported.stage, f"{failure[0]}: {failure[1]}")
