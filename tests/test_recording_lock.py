"""One writer per result file: recordings run side by side on one commit and machine, each in its own
folder, and merge into the shared one under the machine folder's lock, each benchmark keeping the
pattern, tier and provenance of the run that measured it (:mod:`vkbench.results.recording`,
:mod:`vkbench.results.sidecar`, :mod:`vkbench.results.locks`). Real asv 0.6 result files in tmp."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from asv_json import COLUMNS, count_row, write_result

from vkbench.paths import ROOT
from vkbench.results import locks, sidecar
from vkbench.results.asv_files import read_file
from vkbench.results.model import Provenance
from vkbench.results.recording import RecordingError, recording
from vkbench.suite import catalogue

COMMIT = "c" * 40
MACHINE = "box"
CPU, EVENTS = catalogue.PROBE_CPU_OPS.name, catalogue.PARTITION_EVENTS.name
VLA, LADDER = catalogue.VLA_CPU_OPS.name, catalogue.PROBE_LADDER.name
#: Six benchmarks of the gate's modules, one for each of six recordings at once.
SIX = [catalogue.PROBE_CPU_OPS, catalogue.PROBE_PROGRAMS, catalogue.PROBE_SHARE, catalogue.PROBE_FAILED,
       catalogue.PARTITION_COUNT, catalogue.POLICY_CPU_OPS]
GATE_PATTERN, RUNTIME_PATTERN = r"^bench_probes\.|^bench_partition\.PartitionWork\.", r"^bench_runtime\."
GATE = {"tier": "gate", "bench_pattern": GATE_PATTERN, "recorded_at": "2026-12-08T10:00:00+00:00",
        "vkbench_commit": "a" * 40, "launch_method": "forkserver", "base_wheel": "1.4.1"}
RUNTIME = {"tier": "runtime", "bench_pattern": RUNTIME_PATTERN, "recorded_at": "2026-12-08T10:00:01+00:00",
           "vkbench_commit": "b" * 40, "launch_method": "spawn", "base_wheel": "1.5.1"}


def now_row(params: list[str], values: list[float]) -> list:
    """A row asv just wrote (``started_at`` now)."""
    row = count_row(params, values)
    row[3] = int(time.time() * 1000)
    return row


#: One recording in its own process: enter, write what its asv would (the seeded commit file with its
#: own rows), wait until the other process is inside too, then leave (the merge) at once.
CHILD = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[5])
from asv_json import write_result
from vkbench.results.asv_files import read_file
from vkbench.results.model import Provenance
from vkbench.results.recording import recording

root, me, other, provenance = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), json.loads(sys.argv[4])
rows = json.loads(sys.argv[6])
with recording(root, Provenance(**provenance)) as run:
    seeded = run.results / "box" / ("c" * 8 + "-virtualenv-py3.12.json")
    held = json.loads(seeded.read_text())["results"] if seeded.exists() else {}
    stamp = int(time.time() * 1000)
    for row in rows.values():
        row[3] = stamp
    write_result(run.results, "c" * 40, 1, {**held, **rows})  # asv keeps the rows it did not run
    me.touch()
    deadline = time.time() + 60
    while not other.exists() and time.time() < deadline:
        time.sleep(0.01)
print(json.dumps([str(p) for p in run.written]))
"""


def _earlier_run(root: Path) -> Path:
    """The commit's file as an earlier ``-b`` run of VLA entries left it (no tier)."""
    path = write_result(root, COMMIT, 1, {VLA: now_row(["'pi0/prefix'"], [18])})
    (path.parent / "machine.json").write_text(json.dumps({"machine": MACHINE, "version": 1}))
    sidecar.merge(path, Provenance(bench_pattern=r"^bench_policies\.VLAPolicyLowering\.",
                                   recorded_at="2026-12-01T00:00:00+00:00", vkbench_commit="0" * 40),
                  patterns={VLA: r"^bench_policies\.VLAPolicyLowering\."})
    return path


def test_two_recordings_of_different_tiers_on_one_commit_at_once_keep_their_own_provenance(
        tmp_path: Path) -> None:
    """A gate run and a runtime run of one commit and machine, in two processes inside their recordings
    at once, both merging as they leave: the file holds both runs' rows and the earlier run's, and each
    benchmark keeps its own run's pattern, tier and provenance (the runtime run no longer files gate rows
    under its pattern, nor the file under its tier)."""
    root = tmp_path / "results"
    path = _earlier_run(root)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    gate_rows = {CPU: count_row(["'mish'", "'elu'"], [1, 3]),
                 EVENTS: count_row(["50"], [7_610_059])}
    runtime_rows = {LADDER: count_row(["'probe/mish'"], [3])}
    runs = [(GATE, gate_rows, "gate"), (RUNTIME, runtime_rows, "runtime")]
    children = [subprocess.Popen([sys.executable, str(script), str(root), str(tmp_path / name),
                                  str(tmp_path / other), json.dumps(provenance), str(ROOT / "tests"),
                                  json.dumps(rows)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
                for (provenance, rows, name), other in zip(runs, ["runtime", "gate"], strict=True)]
    outputs = [child.communicate(timeout=120) for child in children]
    for child, (out, err) in zip(children, outputs, strict=True):
        assert child.returncode == 0, err
        assert json.loads(out) == [str(path)]  # each merged its rows into the one shared file

    record = read_file(path)
    assert set(record.results) == {VLA, CPU, EVENTS, LADDER}  # nobody's rows were dropped
    assert record.values(CPU) == {("mish",): 1.0, ("elu",): 3.0} and record.values(LADDER) == {
        ("probe/mish",): 3.0}
    assert record.sidecar.patterns == {VLA: r"^bench_policies\.VLAPolicyLowering\.", CPU: GATE_PATTERN,
                                       EVENTS: GATE_PATTERN, LADDER: RUNTIME_PATTERN}
    owners = {name: sidecar.run_of(record.sidecar, name) for name in record.results}
    assert owners[CPU] is owners[EVENTS]
    for name, expected in ((CPU, GATE), (EVENTS, GATE), (LADDER, RUNTIME)):
        assert owners[name].provenance.to_json() == {**expected, "tier_source": "recorded"}, name
    assert owners[VLA].provenance.tier is None and owners[VLA].provenance.vkbench_commit == "0" * 40
    assert record.tier == "gate"  # the runtime run's one benchmark does not relabel the gate file
    assert record.sidecar.provenance.vkbench_commit == "a" * 40
    assert json.loads(sidecar.path_for(path).read_text())["vkbench_sidecar"] == sidecar.SCHEMA


def test_recordings_in_threads_lose_no_row(tmp_path: Path) -> None:
    """Six recordings of one commit in threads, all inside at once: every row and every run survives
    the merges (the lock orders their read-modify-writes of the file and its sidecar)."""
    root = tmp_path / "results"
    path = _earlier_run(root)
    inside = threading.Barrier(6)
    errors: list[BaseException] = []

    def record(index: int) -> None:
        try:
            with recording(root, Provenance(tier="gate", bench_pattern=f"p{index}")) as run:
                own = run.results / MACHINE / path.name
                rows = json.loads(own.read_text())["results"]
                write_result(run.results, COMMIT, 1, {**rows, SIX[index].name: now_row(["'mish'"], [index])})
                inside.wait(timeout=30)
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=record, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    record_ = read_file(path)
    assert {b.name for b in SIX} | {VLA} == set(record_.results)
    assert [sidecar.run_of(record_.sidecar, b.name).provenance.bench_pattern for b in SIX] == [
        f"p{i}" for i in range(6)]


def test_a_merge_waits_for_the_folders_lock(tmp_path: Path) -> None:
    """Another process holding the machine folder's lock holds a recording's merge until it lets go."""
    root = tmp_path / "results"
    path = _earlier_run(root)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    (tmp_path / "other").touch()  # no partner to wait for
    with locks.locked(path.parent):
        child = subprocess.Popen([sys.executable, str(script), str(root), str(tmp_path / "me"),
                                  str(tmp_path / "other"), json.dumps(GATE), str(ROOT / "tests"),
                                  json.dumps({CPU: count_row(["'mish'"], [1])})], cwd=ROOT,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while not (tmp_path / "me").exists() and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)
        assert child.poll() is None  # inside its merge, waiting
        assert CPU not in read_file(path).results
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert CPU in read_file(path).results


@pytest.mark.parametrize("broken", ["result", "sidecar"])
def test_a_corrupt_shared_file_is_one_line_and_the_runs_files_are_kept(tmp_path: Path, broken: str) -> None:
    root = tmp_path / "results"
    path = _earlier_run(root)
    damaged = path if broken == "result" else sidecar.path_for(path)
    text = damaged.read_text()[:40]
    with pytest.raises(RecordingError) as raised:
        with recording(root, Provenance(**GATE)) as run:
            write_result(run.results, COMMIT, 1, {CPU: now_row(["'mish'"], [1])})
            damaged.write_text(text)  # another writer broke it meanwhile
    line = str(raised.value)
    assert "\n" not in line and str(damaged) in line and str(run.results) in line
    assert damaged.read_text() == text  # not written over
    assert CPU in read_file(run.results / MACHINE / path.name).results  # the run's rows are kept


def test_a_version_1_sidecar_is_read_migrated_and_not_relabelled_by_a_small_run(tmp_path: Path) -> None:
    """Version 1 kept one provenance per file: no run is known for its benchmarks; the next merge writes
    version 2, and a runtime run of one benchmark leaves the gate file's tier alone."""
    root = tmp_path / "results"
    path = write_result(root, COMMIT, 1, {CPU: now_row(["'mish'"], [1]), EVENTS: now_row(["50"], [5])})
    sidecar.path_for(path).write_text(json.dumps({
        "vkbench_sidecar": 1, "provenance": {"tier": "gate", "bench_pattern": GATE_PATTERN},
        "failures": [], "patterns": {CPU: GATE_PATTERN, EVENTS: GATE_PATTERN}}))
    old = read_file(path).sidecar
    assert old.provenance.tier == "gate" and sidecar.runs(old) == [] and sidecar.run_of(old, CPU) is None
    with recording(root, Provenance(**RUNTIME)) as run:
        own = json.loads((run.results / MACHINE / path.name).read_text())["results"]
        write_result(run.results, COMMIT, 1, {**own, LADDER: now_row(["'probe/mish'"], [3])})
    new = read_file(path)
    stored = json.loads(sidecar.path_for(path).read_text())
    assert stored["vkbench_sidecar"] == 2 and [run["benchmarks"] for run in stored["runs"]] == [[LADDER]]
    assert new.tier == "gate" and new.sidecar.provenance.bench_pattern == GATE_PATTERN
    assert sidecar.run_of(new.sidecar, CPU) is None  # not known: recorded before runs were kept
    assert sidecar.run_of(new.sidecar, LADDER).provenance.tier == "runtime"


def test_columns_of_a_real_asv_file_survive_the_merge(tmp_path: Path) -> None:
    root = tmp_path / "results"
    path = _earlier_run(root)
    with recording(root, Provenance(**GATE)) as run:
        held = json.loads((run.results / MACHINE / path.name).read_text())["results"]
        write_result(run.results, COMMIT, 1, {**held, CPU: now_row(["'mish'"], [1])})
    assert json.loads(path.read_text())["result_columns"] == COLUMNS
