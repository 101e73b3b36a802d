"""``vkbench history confirm``: measure both sides of every unconfirmed step again, then store the verdict.

For each (previous, commit) pair (:func:`vkbench.results.confirmations.pairs`) one asv run measures
both commits back to back, on one machine, with one suite, selecting exactly the pair's points
(``-b``); a timing pair is interleaved over :data:`ROUNDS` rounds with its samples kept, so asv's own
statistics can judge it. The run goes through the ``vkbench upstream`` machinery
(:func:`vkbench.runs.upstream_asv.prepare`: the mirror, the URL rewrite, submodules skipped, the aot
build) into a temporary results directory: the recorded results are never written. The values are
read back with the results model and judged by the pure functions of
:mod:`vkbench.results.confirmations`; each pair's confirmations are stored as soon as it is done, so
an interrupted run resumes where it stopped (a stored confirmation is never re-run). Each stores the
asv command line it ran and asv's exit status, and the run's result files and sidecars are kept under
``<results>/confirmations/<run id>/<machine>/`` (:func:`vkbench.results.confirmations.run_id`), so a
reader can open what a verdict rests on (:func:`vkbench.results.confirmations.audit` checks them).

The same call works on a plain local git repository (its asv config's ``repo``) as on the mirror.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from vkbench.paths import ROOT
from vkbench.results import confirmations
from vkbench.results.asv_files import read_dir
from vkbench.results.confirmations import Confirmation, Pair, Step
from vkbench.results.model import ResultSet
from vkbench.results.recording import recording
from vkbench.runs import asv_machine
from vkbench.runs.provenance import run_provenance
from vkbench.runs.upstream_asv import STATE_DIR, prepare

#: asv rounds of a timing pair, interleaved across its two commits (``--interleave-rounds``): every
#: round takes at least one sample. Not MIN_SAMPLES: with 6 samples a side, even two fully separated
#: sets get p = 2/C(12, 6) = 0.00216 from asv's exact two-sided U test, never below its 0.002; with 8
#: a side the smallest p is 0.00016.
ROUNDS = 8


def asv_args(pair: Pair, config: Path, machine: str, hashfile: Path) -> list[str]:
    """The ``asv run`` of one pair: both commits, exactly its points, samples kept for timings."""
    args = [sys.executable, "-m", "asv", "run", "--config", str(config), "--machine", machine,
            "--show-stderr", "-b", pair.pattern]
    if pair.timing:
        args += ["--interleave-rounds", "-a", f"rounds={ROUNDS}", "--record-samples"]
    return [*args, f"HASHFILE:{hashfile}"]


def run_pair(mirror_or_repo: Path, config: Path, machine: str, pair: Pair, scratch: Path,
             env: Mapping[str, str] | None = None, state_dir: Path = STATE_DIR
             ) -> tuple[ResultSet, int, list[str]]:
    """One asv run of ``pair`` into ``scratch``/results (the thin part that runs asv); returns what it
    recorded there, asv's exit status and the command line it ran."""
    results = scratch / "results"
    hashfile = scratch / "hashes.txt"
    hashfile.write_text(f"{pair.previous}\n{pair.commit}\n")
    asv_env = {**prepare(Path(mirror_or_repo), state_dir), **(env or {})}
    asv_machine.ensure(config, machine, asv_env)
    log = "VKBENCH_FAILURE_LOG"
    with (recording(results, run_provenance(asv_args(pair, config, machine, hashfile), None)) as run,
          asv_machine.own_home({**asv_env, log: run.env[log]}) as run_env):
        command = asv_args(pair, run.config(config, html_dir=str(scratch / "html")), machine, hashfile)
        print("+ " + " ".join(command), file=sys.stderr, flush=True)
        code = subprocess.run(command, cwd=ROOT, env=run_env, check=False).returncode
    return read_dir(results), code, command


def keep(results: Path, into: Path) -> Path:
    """Copy a confirmation run's result files and sidecars (``results/<machine>/``) into ``into``, the
    run's kept folder, without ``machine.json``: asv's own ``publish`` reads every folder holding one, and
    these re-measurements are not the recorded history."""
    for path in sorted(Path(results).glob("*/*")):
        if path.is_file() and path.name != "machine.json" and path.suffix in (".json", ".vkbench"):
            target = into / path.parent.name / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    return into


def judge(pair: Pair, found: ResultSet, machine: str, date: str, command: list[str] | None = None,
          exit_code: int | None = None, files: str | None = None) -> list[Confirmation]:
    """The confirmations of a pair's steps from what its run recorded (pure: no asv), with the run's
    command line, asv's exit status and where its files are kept."""
    out = []
    for step in pair.steps:
        key = step.key
        suite = confirmations.version(found, key.commit, key.benchmark)
        if step.timing:
            before_t = confirmations.timed(found, key.previous, key.benchmark, key.param)
            after_t = confirmations.timed(found, key.commit, key.benchmark, key.param)
            ok, how = confirmations.timing_verdict(step, before_t, after_t)
            before = before_t.value if before_t else None
            after = after_t.value if after_t else None
            samples = (before_t.samples if before_t else [], after_t.samples if after_t else [])
        else:
            before = confirmations.measured(found, key.previous, key.benchmark, key.param)
            after = confirmations.measured(found, key.commit, key.benchmark, key.param)
            ok, how = confirmations.count_verdict(step, before, after)
            samples = ([], [])
        out.append(Confirmation(key.benchmark, key.param, key.previous, key.commit, date, machine, suite,
                                step.before, step.after, before, after, ok, how, *samples,
                                command=command, exit_code=exit_code, files=files))
    return out


def confirm(results_root: Path, mirror_or_repo: Path, config: Path, machine: str, steps: Sequence[Step], *,
            env: Mapping[str, str] | None = None, limit: int | None = None,
            log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
            state_dir: Path = STATE_DIR) -> list[Confirmation]:
    """Re-measure both sides of ``steps`` (those already confirmed in ``results_root`` are skipped) and
    store each pair's confirmations in ``results_root/confirmations.json`` as it finishes, with the asv
    command, its exit status and the run's files kept under ``results_root/confirmations/<run id>/``.

    ``mirror_or_repo``: the git dir asv's ``repo`` is rewritten to (the ExecuTorch mirror, or the local
    repository ``config`` names); ``config``: an asv config (``.asv/upstream.conf.json``); ``machine``:
    the recorded files' machine name; ``env``: extra environment for asv (``HOME`` …); ``limit``: at
    most that many pairs. Returns the confirmations stored by this call. Raises
    :class:`~vkbench.results.confirmations.ConfirmationsError` before measuring anything when the
    stored file cannot be read.
    """
    store = confirmations.path_for(results_root)
    todo = confirmations.pairs(confirmations.pending(steps, confirmations.read(store)))
    done: list[Confirmation] = []
    for number, pair in enumerate(todo[:limit] if limit is not None else todo, 1):
        log(f"pair {number}/{len(todo)}: {pair.previous[:8]} -> {pair.commit[:8]}, {len(pair.steps)} steps"
            f"{' (timing, interleaved)' if pair.timing else ''}")
        date = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        run = confirmations.run_id(pair.previous, pair.commit, date, "timing" if pair.timing else "count")
        kept = confirmations.kept_folder(results_root, run)
        with tempfile.TemporaryDirectory(prefix="vkbench-confirm-") as tmp:
            found, code, command = run_pair(mirror_or_repo, config, machine, pair, Path(tmp), env, state_dir)
            judged = judge(pair, found, machine, date, command, code, f"{confirmations.KEPT}/{run}")
            if code != 0 and all(c.measured_before is None and c.measured_after is None for c in judged):
                log(f"  asv exited {code} and measured nothing: not stored (run again)")
                continue
            keep(Path(tmp) / "results", kept)
        confirmations.write(store, judged)
        done += judged
        for c in judged:
            log("  " + c.line())
    return done
