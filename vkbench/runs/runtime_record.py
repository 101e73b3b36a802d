"""``vkbench runtime record``: one upstream commit's Vulkan runtime, recorded by asv (``results/upstream``).

The runtime history (``docs/runtime.md``) records each runtime class with that commit's own Vulkan
runtime: a ``vkbench build full`` venv of the commit (over a release wheel's core) and its C++
runner. asv runs the ``bench_runtime`` benchmarks in that venv (``-E existing:``), filed under the
commit (``--set-commit-hash``) and a machine name per device and tracer setting, inside
:func:`vkbench.results.recording.recording` (the runtime's error lines reach the sidecar), with
``VKBENCH_BUNDLES`` pointing at the saved programs (lowered once, so only the runtime differs
between two records). The results are filed under a path-independent environment
(:func:`vkbench.runs.ledger.normalize_results`), so two commits' records compare.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from vkbench.paths import ROOT
from vkbench.results.recording import recording
from vkbench.runs import asv_machine, ledger
from vkbench.runs.provenance import run_provenance

#: What a runtime record runs unless told otherwise: the probes' ladder and the step limit.
DEFAULT_PATTERN = r"^bench_runtime\.(ProbeLadder|StepLimit)\."


def config_for(mirror: Path, results: Path, scratch: Path) -> Path:
    """An asv config for ``-E existing:`` runs over ``mirror``: asv.conf.json without its build and
    environment matrix (the venv is built already), writing results to ``results``."""
    from vkbench.build.hooks import existing_env_config

    return existing_env_config(scratch / "runtime.conf.json", repo=str(mirror), branches=["main"],
                               results_dir=str(results), benchmark_dir=str(ROOT / "benchmarks"),
                               env_dir=str(scratch / "env"), html_dir=str(scratch / "html"))


def record_runtime(commit: str, python: Path, runner: Path, machine: str, *, mirror: Path,
                   results: Path, bundles: Path, base_wheel: str, pattern: str = DEFAULT_PATTERN,
                   scratch: Path = ROOT / ".asv" / "runtime-record") -> tuple[Path | None, int, float]:
    """Run asv's ``pattern`` for ``commit`` with ``python`` (its runtime's venv) and ``runner`` (the
    folder holding ``pte_runner``); returns the results file, asv's exit status and the seconds."""
    conf = config_for(mirror, results, scratch)

    def command(config: Path) -> list[str]:
        # asv selects no environment for a relative ``existing:`` path: the venv's python, absolute
        return [sys.executable, "-m", "asv", "run", "--config", str(config), "-E",
                f"existing:{python.absolute()}", "--set-commit-hash", commit, "--machine", machine,
                "-b", pattern, "--launch-method", "spawn", "--show-stderr"]

    stamp = run_provenance(command(conf), "runtime")
    stamp.base_wheel = base_wheel
    start = time.time()
    with recording(results, stamp) as run:  # asv writes its own folder, merged into ``results`` after
        env = {**run.env, "VKBENCH_PTE_RUNNER": str(runner.absolute() / "pte_runner"),
               "VKBENCH_BUNDLES": str(bundles.absolute()), "ASV_PYTHONPATH": str(ROOT)}
        asv_machine.ensure(conf, machine, env)
        own = command(run.config(conf))
        print("+ " + " ".join(own), file=sys.stderr, flush=True)
        with asv_machine.own_home(env) as own_env:
            code = subprocess.run(own, cwd=ROOT, env=own_env, check=False).returncode
    return ledger.normalize_results(commit, machine, results), code, time.time() - start
