"""``vkbench history confirm --runners DIR``: both sides of every runtime step again, each on its own runtime.

A runtime step is a ladder rung that differs between two recorded commits of one runtime machine
(:mod:`vkbench.results.runtime_timeline`). ``history confirm``'s asv run builds no Vulkan runtime, so
those steps are confirmed here: each side's C++ runner (``DIR/runner-<sha8>/pte_runner``, made by
``vkbench runtime build-runner`` from that commit's ``vkbench build full``; a runner of another commit
of the same runtime class serves, its build inputs being the same) runs the step's saved programs
(``VKBENCH_BUNDLES``: the ones the records ran) back to back in this process, through the functions
the ladder benchmarks record with (:func:`vkbench.execution.record.record`, then
:func:`~vkbench.execution.record.rungs_short`). The verdict is the lowering's
(:func:`vkbench.results.confirmations.count_verdict`): both rungs equal the recorded ones. Each pair's
confirmations are stored as soon as it is done, as ``history confirm`` stores the lowering's, with the
command that ran them (no asv runs, so no exit status) and what each side's runner measured kept as
``<results>/confirmations/<run id>/measured.json`` (the runners, the bundles, the rungs per point).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from vkbench.commits.classes import Classes
from vkbench.execution import record
from vkbench.results import confirmations
from vkbench.results.confirmations import Confirmation, Step
from vkbench.suite.identity import suite_version

#: The backend every runtime ladder executes (``benchmarks/bench_runtime.py``, ``bench_policy_runtime``).
BACKEND = "vulkan"


class RunnerMissing(LookupError):
    """No runner for a commit under the runners folder; ``str()`` is one line naming both."""


def runner_for(commit: str, runners: Path, classes: Classes | None) -> Path:
    """``runners/runner-<sha8>/pte_runner`` of ``commit``, or of another commit of its runtime class."""
    candidates = [commit]
    if classes is not None:
        candidates += next((k.commits for k in classes.classes if commit in k.commits), [])
    for candidate in candidates:
        path = Path(runners) / f"runner-{candidate[:8]}" / "pte_runner"
        if path.is_file():
            return path
    raise RunnerMissing(f"no runner for {commit[:8]} (or its runtime class) in {runners}: "
                        f"build one with `vkbench runtime build-runner {runners}/runner-{commit[:8]} ...`")


@contextmanager
def _runner(path: Path) -> Iterator[None]:
    """``VKBENCH_PTE_RUNNER`` set to ``path`` for this process and its children, then restored."""
    old = os.environ.get("VKBENCH_PTE_RUNNER")
    os.environ["VKBENCH_PTE_RUNNER"] = str(path)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("VKBENCH_PTE_RUNNER", None)
        else:
            os.environ["VKBENCH_PTE_RUNNER"] = old


def _split(param: str) -> tuple[str, str]:
    """``"probe/mish, native"`` -> (workload, runner)."""
    workload, runner = param.rsplit(", ", 1)
    return workload, runner


def measure(runner: Path, steps: Sequence[Step]) -> dict[str, float | None]:
    """Rungs short per step param, measured with ``runner`` (None where the runner could not run it)."""
    wanted = sorted({_split(s.key.param) for s in steps})
    with _runner(runner):
        cache = record.record(sorted({w for w, _ in wanted}), [BACKEND], sorted({r for _, r in wanted}))
    found: dict[str, float | None] = {}
    for workload, runner_name in wanted:
        param = f"{workload}, {runner_name}"
        try:
            found[param] = float(record.rungs_short(cache, workload, BACKEND, runner_name))
        except NotImplementedError:
            found[param] = None
    return found


def machines_of(steps: Sequence[Step]) -> list[str]:
    """The runtime machines whose steps are in ``steps``, sorted."""
    return sorted({step.key.machine for step in steps})


def command_line(runners: Path, machine: str) -> list[str]:
    """The command a runtime confirmation records as the one it ran (this process, through the CLI)."""
    return [sys.executable, "-m", "vkbench", "history", "confirm", "--runners", str(runners),
            "--machine", machine]


def confirm_runtime(results_root: Path, steps: Sequence[Step], runners: Path,
                    classes: Classes | None, machine: str,
                    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
                    command: list[str] | None = None) -> list[Confirmation]:
    """Re-measure both sides of each of ``machine``'s steps without a stored confirmation, each with its
    commit's runner; store each pair's confirmations in ``results_root/confirmations.json``.

    The runners are builds of one runtime machine (the event tracer on or off changes how far a
    delegate runs), so only that machine's steps are measured with them; another machine's steps wait
    for a run with its own runners.

    ``command``: the command line to store (default: :func:`command_line`). Raises
    :class:`RunnerMissing` before measuring anything when a side has no runner, and
    :class:`~vkbench.results.confirmations.ConfirmationsError` when the stored file cannot be read.
    """
    store = confirmations.path_for(results_root)
    stored = confirmations.read(store)
    todo = confirmations.pairs(step for step in confirmations.pending(steps, stored)
                               if step.key.machine == machine)
    sides = {pair.previous: runner_for(pair.previous, runners, classes) for pair in todo}
    sides.update({pair.commit: runner_for(pair.commit, runners, classes) for pair in todo})
    suite = suite_version("bench_runtime")
    done: list[Confirmation] = []
    for number, pair in enumerate(todo, 1):
        log(f"runtime pair {number}/{len(todo)}: {pair.previous[:8]} -> {pair.commit[:8]}, "
            f"{len(pair.steps)} steps, runners {sides[pair.previous].parent.name} and "
            f"{sides[pair.commit].parent.name}")
        date = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        before = measure(sides[pair.previous], pair.steps)
        after = measure(sides[pair.commit], pair.steps)
        run = confirmations.run_id(pair.previous, pair.commit, date, f"runtime-{machine}")
        kept = confirmations.kept_folder(results_root, run)
        kept.mkdir(parents=True, exist_ok=True)
        used = {commit: sides[commit].parent.name for commit in (pair.previous, pair.commit)}
        (kept / confirmations.MEASURED).write_text(json.dumps({
            "runners": used, "bundles": os.environ.get("VKBENCH_BUNDLES"), "before": before, "after": after},
            indent=1) + "\n")
        judged = []
        for step in pair.steps:
            key = step.key
            ok, how = confirmations.count_verdict(step, before[key.param], after[key.param])
            how += f"; each side on its own runtime ({sides[key.previous].parent.name}, " \
                   f"{sides[key.commit].parent.name})"
            judged.append(Confirmation(key.benchmark, key.param, key.previous, key.commit, date,
                                       key.machine, suite, step.before, step.after,
                                       before[key.param], after[key.param], ok, how,
                                       command=command or command_line(runners, machine),
                                       files=f"{confirmations.KEPT}/{run}"))
        confirmations.write(store, judged)
        done += judged
        for c in judged:
            log("  " + c.line())
    return done
