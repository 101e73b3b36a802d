"""Keeping an asv series across a change of vkbench's code by evidence (``vkbench.suite.equivalence``,
``vkbench.runs.equivalence_run.judge``), and ``vkbench changes`` honouring it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vkbench.results.asv_files import read_dir
from vkbench.results.changes import SAME, SUITE_CHANGED, changes
from vkbench.runs.equivalence_run import judge
from vkbench.suite import catalogue, equivalence
from vkbench.suite.equivalence import Equivalence, canonical, kept_version

OLD, MID, NEW = "suite-" + "a" * 16, "suite-" + "b" * 16, "suite-" + "c" * 16


def _record(old: str, new: str, kept: list[str], restarted: list[str] = ()) -> Equivalence:
    return Equivalence("bench_probes", old, new, kept, list(restarted), ["1" * 8],
                       {f"bench_probes.{c}.track_x": {"1" * 8: [[1.0], [1.0]]} for c in kept})


def test_a_kept_class_keeps_the_oldest_digest_of_its_chain_and_a_restarted_one_its_own() -> None:
    records = [_record(OLD, MID, ["ProbeCoverage", "ProbeFailure"]),
               _record(MID, NEW, ["ProbeCoverage"], ["ProbeFailure"])]
    assert kept_version("bench_probes", "ProbeCoverage", NEW, records) == OLD
    assert kept_version("bench_probes", "ProbeFailure", NEW, records) == NEW  # changed at MID -> NEW
    assert kept_version("bench_probes", "ProbeFailure", MID, records) == OLD
    assert kept_version("bench_probes", None, NEW, records) == NEW  # the module's: a record restarts a class
    assert kept_version("bench_probes", None, MID, records) == OLD
    assert kept_version("bench_partition", "ProbeCoverage", NEW, records) == NEW  # another module
    assert canonical("bench_probes.ProbeCoverage.track_cpu_ops", NEW, records) == OLD
    assert canonical("bench_probes.ProbeCoverage.track_cpu_ops", None, records) is None
    loop = [_record(OLD, NEW, ["ProbeCoverage"]), _record(NEW, OLD, ["ProbeCoverage"])]
    assert kept_version("bench_probes", "ProbeCoverage", NEW, loop) in (OLD, NEW)  # a cycle ends


def test_records_round_trip_and_a_bad_file_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "suite-equivalence.json"
    assert equivalence.read(path) == []  # none stored yet
    records = [_record(OLD, NEW, ["ProbeCoverage"], ["ProbeWork"])]
    equivalence.write(records, path)
    assert equivalence.read(path) == records
    path.write_text('{"vkbench_suite_equivalence": 99, "records": []}')
    with pytest.raises(ValueError, match="suite-equivalence.json: not a vkbench suite-equivalence file"):
        equivalence.read(path)


def test_a_record_that_keeps_a_class_whose_values_differ_contradicts_itself() -> None:
    sound = _record(OLD, NEW, ["ProbeCoverage"])
    assert sound.contradictions() == []
    bad = Equivalence("bench_probes", OLD, NEW, ["ProbeCoverage", "ProbeFailure"], [], ["1" * 8],
                      {"bench_probes.ProbeCoverage.track_cpu_ops": {"1" * 8: [[3.0], [4.0]]}})
    assert bad.contradictions() == ["bench_probes.ProbeCoverage.track_cpu_ops",
                                    "ProbeFailure: kept without a value"]


def test_every_stored_record_keeps_only_what_its_values_show() -> None:
    for record in equivalence.read():
        assert record.contradictions() == [], record.module
        assert record.kept or record.restarted


def _asv(path: Path, commit: str, date: int, values: dict[str, dict[str, float]],
         versions: dict[str, str]) -> None:
    results = {name: [list(points.values()), [[repr(p) for p in points]], versions[name]]
               for name, points in values.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "version": 2, "commit_hash": commit, "env_name": "e", "date": date, "params": {}, "python": "3.12",
        "requirements": {}, "env_vars": {}, "result_columns": ["result", "params", "version"],
        "results": results, "durations": {}}))
    machine = path.parent / "machine.json"
    if not machine.exists():
        machine.write_text(json.dumps({"machine": path.parent.name, "version": 1}))


def test_judge_keeps_classes_whose_counts_are_equal_and_restarts_the_rest(tmp_path: Path) -> None:
    cpu, failed = catalogue.PROBE_CPU_OPS.name, catalogue.PROBE_FAILED.name
    recorded, measured = tmp_path / "recorded" / "box", tmp_path / "measured" / "box"
    for commit, date in (("1" * 40, 1), ("2" * 40, 2)):
        _asv(recorded / f"{commit[:8]}.json", commit, date,
             {cpu: {"mish": 3.0}, failed: {"mish": 0.0}}, {cpu: OLD, failed: OLD})
    versions = {cpu: NEW, failed: NEW}
    _asv(measured / "1.json", "1" * 40, 1, {cpu: {"mish": 3.0}, failed: {"mish": 0.0}}, versions)
    _asv(measured / "2.json", "2" * 40, 2, {cpu: {"mish": 3.0}, failed: {"mish": 1.0}}, versions)
    (tmp_path / "measured" / "benchmarks.json").write_text(json.dumps(
        {cpu: {"unit": "ops"}, failed: {"unit": "failed"}, "version": 2}))
    [record] = judge(read_dir(tmp_path / "recorded"), [read_dir(tmp_path / "measured")], "box",
                     ["1" * 8, "2" * 8], "test", "2026-12-07")
    assert (record.module, record.old, record.new) == ("bench_probes", OLD, NEW)
    assert record.kept == ["ProbeCoverage"] and record.restarted == ["ProbeFailure"]
    assert record.values[failed]["2" * 8] == [[0.0], [1.0]]
    assert record.contradictions() == []


def test_a_probe_the_recorded_grid_lacks_is_added_not_compared(tmp_path: Path) -> None:
    """A probe added to the catalogue: the recorded grid has no point for it, so its value is listed as
    added and the class is kept on the points both sides have; a class with nothing to compare restarts."""
    cpu, failed = catalogue.PROBE_CPU_OPS.name, catalogue.PROBE_FAILED.name
    recorded, measured = tmp_path / "recorded" / "box", tmp_path / "measured" / "box"
    _asv(recorded / "1.json", "1" * 40, 1, {cpu: {"mish": 3.0}, failed: {"elu": 0.0}},
         {cpu: OLD, failed: OLD})
    _asv(measured / "1.json", "1" * 40, 1, {cpu: {"mish": 3.0, "clone_5d": 0.0}, failed: {"clone_5d": 0.0}},
         {cpu: NEW, failed: NEW})
    (tmp_path / "measured" / "benchmarks.json").write_text(json.dumps(
        {cpu: {"unit": "ops"}, failed: {"unit": "failed"}, "version": 2}))
    [record] = judge(read_dir(tmp_path / "recorded"), [read_dir(tmp_path / "measured")], "box", ["1" * 8],
                     "test", "2026-12-07")
    assert record.kept == ["ProbeCoverage"] and record.restarted == ["ProbeFailure"]
    assert record.values[cpu]["1" * 8] == [[3.0], [3.0]]
    assert record.added == {cpu: [f"{cpu}('clone_5d')"], failed: [f"{failed}('clone_5d')"]}
    assert Equivalence.from_json(json.loads(json.dumps(record.to_json()))) == record
    assert record.contradictions() == []


def test_changes_compare_a_kept_class_across_the_suite_change(tmp_path: Path, monkeypatch) -> None:
    cpu = catalogue.PROBE_CPU_OPS.name
    box = tmp_path / "results" / "box"
    _asv(box / "1.json", "1" * 40, 1, {cpu: {"mish": 3.0}}, {cpu: OLD})
    _asv(box / "2.json", "2" * 40, 2, {cpu: {"mish": 4.0}}, {cpu: NEW})  # recorded after the suite changed
    assert [s.why for s in changes(read_dir(tmp_path / "results")).left_out] == [SUITE_CHANGED]
    monkeypatch.setattr(equivalence, "stored", lambda: (_record(OLD, NEW, ["ProbeCoverage"]),))
    table = changes(read_dir(tmp_path / "results"))
    assert [(c.param, c.suite) for c in table.changes] == [("mish", SAME)] and table.left_out == []
