"""The runtime ladder as recorded: its rungs, the benchmarks that record it, and how a value reads.

A ladder benchmark (params: entry or ``probe/<name>`` x runner) stores the rungs a workload missed:
0 = its output matches eager PyTorch ... 4 = it did not lower. Execution writes these values
(:mod:`vkbench.execution.outcome`); the bug list and the runtime page read them; this module is the
one place that knows both the rung names and the encoding.

A point that stops short of "matches" keeps why, as a lowering's failed point does: the runtime's own
error line (``VecUtils.h:367 make_ivec2: (ints.size() == 2) is false!``, not only "load failed") is
logged by the benchmark process (:func:`note_outcome`, the suite's failure log, kind
:data:`RUNTIME_KIND`) and stored in the result file's sidecar for the ladder point it explains
(:func:`ladder_failures`, :func:`stamp_failures`); :func:`stop_reasons` reads them back.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from vkbench.results import sidecar
from vkbench.results.failure_key import normalize_error
from vkbench.results.model import Failure, Params, ResultFile, ResultSet
from vkbench.results.run_log import RunLog, WorkloadFailures, note_failure
from vkbench.suite import catalogue

#: The rungs, in order: what an outcome's ``reached`` can be (``""``: not even lowered).
LADDER = ("lowered", "loads", "runs", "matches")
#: Rungs missed -> the rung reached (the ladder, top first; 4 missed: not lowered).
RUNGS = (*reversed(LADDER), "not lowered")
#: asv's ladder benchmarks (params: entry or ``probe/<name>`` x runner).
LADDERS = (catalogue.POLICY_LADDER, catalogue.VLA_LADDER, catalogue.PROBE_LADDER)


def rung_name(missed: float) -> str:
    """The rung reached, from a recorded value (rungs missed; asv stores it as a float)."""
    return RUNGS[int(missed)]


def rungs_reached(releases: ResultSet) -> dict[str, dict[str, str]]:
    """``entry (or probe/<name>) -> "machine (runner)" -> rung reached`` over the release results."""
    found: dict[str, dict[str, str]] = {}
    for record in releases.files:
        for benchmark in LADDERS:
            for point in record.points(benchmark.name):
                if point.value is not None:
                    entry, runner = point.params
                    found.setdefault(entry, {})[f"{record.machine} ({runner})"] = rung_name(point.value)
    return found


def probe_rungs_by_commit(probe: str, upstream: ResultSet) -> dict[str, dict[str, str]]:
    """``commit -> "machine (runner)" -> rung`` of ``probe/<probe>`` on every upstream commit whose
    ``ProbeLadder`` holds it (the runtime's history; n/a points left out)."""
    found: dict[str, dict[str, str]] = {}
    for record in upstream.files:
        for point in record.points(catalogue.PROBE_LADDER.name):
            if point.value is not None and len(point.params) == 2 and point.params[0] == f"probe/{probe}":
                found.setdefault(record.commit, {})[f"{record.machine} ({point.params[1]})"] = rung_name(
                    point.value)
    return found


#: The failure log's kind for a runtime outcome that stopped short (workload ``entry|backend|runner``).
RUNTIME_KIND = "runtime"
#: Stages where nothing was tried (no runner here, no saved program): not a rung, not logged.
_NOT_TRIED = ("runtime", "missing")


def outcome_key(workload: str, backend: str, runner: str) -> str:
    return f"{workload}|{backend}|{runner}"


#: SNR (dB) against eager from which an output matches (what ``vkbench.execution.outcome`` reads).
MATCH_SNR_DB = 40.0
#: The stage a program that ran but missed eager is logged under (a NaN output fails there too).
MISMATCH_STAGE = "compare"


def mismatch_line(max_abs_diff: float | None, snr_db: float | None) -> str:
    """Why a point that runs does not match: its distance from eager (finite, but SNR below 40 dB)."""
    if snr_db is None:
        return "no float output compared with eager"
    diff = "?" if max_abs_diff is None else f"{max_abs_diff:.3g}"
    return f"output not eager's: max abs diff {diff}, SNR {snr_db:.1f} dB"


def note_outcome(workload: str, backend: str, runner: str, stage: str, error: str) -> None:
    """Log why one runtime combination stopped short (called where the ladder records its outcomes)."""
    if stage and stage not in _NOT_TRIED:
        note_failure(RUNTIME_KIND, outcome_key(workload, backend, runner), stage, error)


def ladder_failures(record: ResultFile, logged: WorkloadFailures,
                    backend: str = "vulkan") -> list[tuple[str, Params, Failure]]:
    """``(benchmark, params, failure)`` for each ladder point of ``record`` that stopped short of
    "matches" and whose runtime failure the log holds (the ladders run on ``backend``)."""
    out = []
    for benchmark in LADDERS:
        for point in record.points(benchmark.name):
            if point.value is None or point.value == 0 or len(point.params) != 2:
                continue
            entry, runner = point.params
            failure = logged.get((RUNTIME_KIND, outcome_key(entry, backend, runner)))
            if failure is not None:
                out.append((benchmark.name, point.params, failure))
    return out


def stamp_failures(records: Iterable[ResultFile], log: Path) -> list[Path]:
    """Store the runtime failures of the failure log ``log`` in the sidecars of ``records`` (the
    result files a run wrote); the files whose sidecar gained a line."""
    found = RunLog.read(log)
    stamped = []
    for record in records:
        failures = ladder_failures(record, found.for_record(record.commit, record.env_name).failures)
        if failures:
            sidecar.merge(record.path, failures=failures)
            stamped.append(record.path)
    return stamped


def logged_outcomes(outcomes: Iterable[dict]) -> WorkloadFailures:
    """The failure-log form of outcome JSON (``vkbench runtime run --out``'s ``outcomes``): the same
    runs' reasons when the run's own log is gone (a record made before the ladder logged them)."""
    logged: WorkloadFailures = {}
    for outcome in outcomes:
        stage = str(outcome.get("stage") or "")
        snr = outcome.get("snr_db")
        if outcome.get("ok") and outcome.get("runner") and (snr is None or snr < MATCH_SNR_DB):
            key = outcome_key(str(outcome["workload"]), str(outcome["backend"]), str(outcome["runner"]))
            line = mismatch_line(outcome.get("max_abs_diff"), snr)
            logged[(RUNTIME_KIND, key)] = Failure(MISMATCH_STAGE, line)
        elif not outcome.get("ok") and stage and stage not in _NOT_TRIED:
            key = outcome_key(str(outcome["workload"]), str(outcome["backend"]), str(outcome["runner"]))
            error = normalize_error(stage, str(outcome.get("error") or ""))
            logged[(RUNTIME_KIND, key)] = Failure(stage, error)
    return logged


def stop_reasons(releases: ResultSet, at_commit: bool = False) -> dict[str, dict[str, Failure]]:
    """``entry -> "machine (runner)" -> the stored failure`` of every ladder point that stopped short
    and kept its reason (the runtime's error line, or the lowering's for a "not lowered" point);
    ``at_commit`` adds `` at <commit>`` to the key (upstream results: one machine, many commits)."""
    found: dict[str, dict[str, Failure]] = {}
    for record in releases.files:
        for benchmark in LADDERS:
            for point in record.points(benchmark.name):
                failure = record.sidecar.failures.get((benchmark.name, point.params))
                if failure is not None and point.value:
                    entry, runner = point.params
                    where = f"{record.machine} ({runner})" + (f" at {record.commit[:8]}" if at_commit else "")
                    found.setdefault(entry, {})[where] = failure
    return found
