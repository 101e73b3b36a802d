"""The step limit: the largest ``n`` for which ``Many(n)`` executes on a runner.

With the event tracer every Vulkan dispatch takes 2 of the QueryPool's 4096
timestamps, so a delegate stops near 2048 dispatches: ``Many(1023)`` runs,
``Many(1024)`` fails. The search gallops then bisects (:func:`find_step_limit`);
every probe is :func:`vkbench.execution.measure.measure_isolated`, a fresh child
with a freshly lowered (or ``VKBENCH_BUNDLES``-saved) and loaded program, so a
probe that aborts the process is recorded as a failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vkbench import settings
from vkbench.execution.outcome import Outcome

#: Stages at which a probe says nothing about execution: the program never got to a runner.
NOT_EXECUTED = frozenset({"runtime", "missing", "build", "export", "to_edge", "partition", "preprocess",
                          "to_executorch", "lower"})


class NotLowered(RuntimeError):
    """A probe's program was never executed (no runtime, or lowering failed): the limit would be wrong."""


@dataclass
class StepLimit:
    """Result of :func:`find_step_limit`: ``limit`` executes, ``limit + 1`` does not (or cap)."""

    cap: int
    limit: int
    probes: list[Outcome]

    @property
    def short_of_cap(self) -> int:
        return self.cap - self.limit

    @property
    def first_failure(self) -> Outcome | None:
        failing = [p for p in self.probes if not p.ok]
        return min(failing, key=steps) if failing else None

    def to_json(self) -> dict[str, object]:
        return {"cap": self.cap, "limit": self.limit, "short_of_cap": self.short_of_cap,
                "probes": [p.to_json() for p in self.probes]}


def steps(outcome: Outcome) -> int:
    """``n`` of a ``many/<n>`` outcome."""
    return int(outcome.workload.split("/", 1)[1])


def probe_with(runner_name: str) -> Callable[[int], Outcome]:
    """``n -> Outcome`` of ``Many(n)`` on Vulkan with that runner, in a child process."""
    from vkbench.execution.measure import measure_isolated

    def probe(n: int) -> Outcome:
        return measure_isolated(f"many/{n}", ["vulkan"], [runner_name])[0]

    return probe


def find_step_limit(
    probe: Callable[[int], Outcome],
    cap: int | None = None,
    *,
    start: int | None = None,
    resolution: int = 1,
    log: Callable[[str], None] | None = None,
) -> StepLimit:
    """Largest ``n <= cap`` for which ``probe(n)`` executes: gallop, then bisect.

    Lowering ``Many(n)`` costs super-linearly in ``n`` (minutes at n=2000 on a
    2-core machine), so the search climbs from ``start`` by doubling until a
    size fails (or ``cap`` runs), then bisects between the last size that ran
    and the first that failed: about log2(limit) probes, none much larger
    than the limit. Assumes monotonicity: if ``n`` runs, every smaller ``n``
    does. ``resolution`` > 1 stops the bisection once the bracket is that
    narrow. A probe that never reached a runner raises :class:`NotLowered`.
    """
    cap = settings.integer("VKBENCH_STEP_CAP") if cap is None else cap
    start = settings.integer("VKBENCH_STEP_START") if start is None else start
    probes: list[Outcome] = []

    def check(n: int) -> bool:
        outcome = probe(n)
        probes.append(outcome)
        if log:
            log(f"n={n}: {'ok' if outcome.ok else 'FAIL ' + outcome.stage + ': ' + outcome.error} "
                f"{outcome.seconds}")
        if not outcome.ok and outcome.stage in NOT_EXECUTED:
            raise NotLowered(f"Many({n}) never executed: {outcome.stage}: {outcome.error}")
        return outcome.ok

    good, n = 0, max(1, min(start, cap))
    while True:
        if not check(n):
            bad = n
            break
        good = n
        if n >= cap:
            return StepLimit(cap, cap, probes)
        n = min(2 * n, cap)
    while bad - good > max(1, resolution):
        mid = (good + bad) // 2
        if check(mid):
            good = mid
        else:
            bad = mid
    return StepLimit(cap, good, probes)
