"""The suite's self-report (``vkbench cost``): wall, unique work and efficiency per commit and tier."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from vkbench.results.cost import costs
from vkbench.suite import catalogue
from vkbench.suite.tiers import TARGET_MINUTES, TIERS

COLUMNS = ["result", "params", "version", "started_at", "duration", "stats_ci_99_a", "stats_ci_99_b",
           "stats_q_25", "stats_q_75", "stats_number", "stats_repeat", "samples", "profile"]


def _meta(name: str, params: list[list[str]], kind: str, cache: str | None) -> dict:
    return {"name": name, "params": params, "type": kind, "setup_cache_key": cache, "version": "1"}


def _entry(result: list, duration: float, repeat: list[int] | None = None) -> list:
    data = {"result": result, "duration": duration}
    if repeat:
        data |= {"stats_number": [1] * len(result), "stats_repeat": repeat}
    return [data.get(column) for column in COLUMNS]


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """An asv results dir shaped like a gate-tier record of one commit."""
    probes, policy = [["'mish'", "'elu'"]], [["'act/model'"]]
    benchmarks = {
        meta["name"]: meta for meta in (
            _meta("bench_probes.ProbeCoverage.track_cpu_ops", probes, "track", "bench_probes:20"),
            _meta("bench_probes.ProbeWork.track_work_seconds", probes, "track", "bench_probes:20"),
            _meta("bench_partition.PartitionScaling.time_partition", [["50", "400"]], "time", None),
            _meta(catalogue.POLICY_WORK.name, policy, "track", "bench_policies:1"),
            _meta(catalogue.POLICY_LOWERING_WORK.name, policy, "track", "bench_policies:2"),
        )
    } | {"version": 2}
    (tmp_path / "benchmarks.json").write_text(json.dumps(benchmarks))
    machine = tmp_path / "box"
    machine.mkdir()
    (machine / "machine.json").write_text("{}")
    data = {
        "commit_hash": "a" * 40, "result_columns": COLUMNS,
        "results": {
            "bench_probes.ProbeCoverage.track_cpu_ops": _entry([1, 0], 2.0),
            "bench_probes.ProbeWork.track_work_seconds": _entry([3.0, None], 2.0),
            "bench_partition.PartitionScaling.time_partition": _entry([2.0, 60.0], 140.0, repeat=[10, 1]),
            catalogue.POLICY_WORK.name: _entry([40.0], 1.0),
            catalogue.POLICY_LOWERING_WORK.name: _entry([100.0], 1.0),
        },
        "durations": {"<setup_cache bench_probes:20>": 10.0, "<setup_cache bench_policies:1>": 50.0,
                      "<setup_cache bench_policies:2>": 110.0, "<build>": 5.0},
    }
    (machine / "aaaaaaaa-env.json").write_text(json.dumps(data))
    return tmp_path


ABSENT = r"^bench_absent\."  # a tier whose benchmarks the results do not hold


def _tiers(monkeypatch, gate: str, standard: str, full: str) -> None:
    for name, pattern in (("gate", gate), ("standard", standard), ("full", full)):
        monkeypatch.setitem(TIERS, name, pattern)


def test_gate_counts_work_once_and_splits_a_time_benchmark_by_its_samples(results, monkeypatch):
    _tiers(monkeypatch, r"^bench_probes\.|time_partition\(50\)|PolicyPartition", ABSENT, ABSENT)
    [gate] = costs(results)
    # wall: probe tracks 2+2 + probe cache 10 + time_partition's share (20 of 80 sampled s) of 140
    #       + PolicyPartition 1 + its cache 50 + the build 5
    assert gate.tier == "gate" and gate.wall_s == pytest.approx(4 + 10 + 140 * 20 / 80 + 1 + 50 + 5)
    # work: probe mish 3 (elu failed: None) + 10 samples x 2 s + act/model's partition-only record 40
    assert gate.work_s == pytest.approx(3 + 20 + 40)
    assert gate.efficiency == pytest.approx(63 / 105)
    assert gate.commit == "a" * 40 and gate.machine == "box" and gate.benchmarks == 4


def _started(results: Path, at: dict[str, tuple[int, float]]) -> None:
    """Set when (ms) each benchmark started and how long (s) it ran."""
    path = results / "box" / "aaaaaaaa-env.json"
    data = json.loads(path.read_text())
    for name, (started, seconds) in at.items():
        data["results"][name][COLUMNS.index("started_at")] = started
        data["results"][name][COLUMNS.index("duration")] = seconds
    path.write_text(json.dumps(data))


def test_processes_side_by_side_cost_the_longest(results, monkeypatch):
    """``vkbench upstream --split 2``: the probes in one asv process, the policy in another at once."""
    _tiers(monkeypatch, r"^bench_probes\.|PolicyPartition", ABSENT, ABSENT)
    t0 = 1_780_000_000_000
    coverage, work = PROBE_TRACKS
    policy = catalogue.POLICY_WORK.name
    # one process: the policy's cache (50 s), then the policy (30 s); the other, at the same time: the
    # probes' cache (10 s), then the two probe tracks (30 s each)
    _started(results, {coverage: (t0 + 10_000, 30.0), work: (t0 + 40_000, 30.0), policy: (t0 + 50_000, 30.0)})
    [gate] = costs(results)
    assert gate.wall_s == pytest.approx(max(10 + 30 + 30, 50 + 30) + 5)  # and the build
    assert gate.work_s == pytest.approx(3 + 40)  # the work is the same either way
    # the same benchmarks one after another (one process, or runs at different times): the sum
    _started(results, {coverage: (t0 + 10_000, 30.0), work: (t0 + 40_000, 30.0),
                       policy: (t0 + 120_000, 30.0)})
    assert costs(results)[0].wall_s == pytest.approx(10 + 30 + 30 + 50 + 30 + 5)


def test_a_file_is_reported_as_the_largest_tier_it_holds(results, monkeypatch):
    _tiers(monkeypatch, r"^bench_probes\.", r"^bench_probes\.|time_partition|^bench_policies\.", ABSENT)
    [standard] = costs(results)
    # act/model: the full lowering (100 s) supersedes the partition-only pass (40 s)
    assert standard.tier == "standard" and standard.work_s == pytest.approx(3 + 20 + 60 + 100)
    assert costs(results, ["gate"]) == []  # never read out of a larger run
    assert [c.tier for c in costs(results, ["standard"])] == ["standard"]


def test_a_file_holding_no_whole_tier_is_not_reported(results, monkeypatch):
    _tiers(monkeypatch, ABSENT, ABSENT, ABSENT)
    assert costs(results) == []


PROBE_TRACKS = ("bench_probes.ProbeCoverage.track_cpu_ops", "bench_probes.ProbeWork.track_work_seconds")


def _grow_suite(results: Path) -> None:
    """The suite after the file was recorded: one probe more in the grid, one benchmark more."""
    benchmarks = json.loads((results / "benchmarks.json").read_text())
    for name in PROBE_TRACKS:
        benchmarks[name]["params"] = [["'mish'", "'logical_not'", "'elu'"]]
    benchmarks["bench_probes.ProbeFailure.track_lowering_failed"] = _meta(
        "bench_probes.ProbeFailure.track_lowering_failed", [["'mish'", "'logical_not'", "'elu'"]], "track",
        "bench_probes:20")
    (results / "benchmarks.json").write_text(json.dumps(benchmarks))
    path = results / "box" / "aaaaaaaa-env.json"
    data = json.loads(path.read_text())
    for name in PROBE_TRACKS:
        data["results"][name][COLUMNS.index("params")] = [["'mish'", "'elu'"]]  # its recorded grid
    path.write_text(json.dumps(data))


def test_a_grown_suite_keeps_an_old_file_in_its_tier(results, monkeypatch):
    _tiers(monkeypatch, r"^bench_probes\.|time_partition\(50\)|PolicyPartition", ABSENT, ABSENT)
    before = costs(results)
    _grow_suite(results)
    # the new benchmark is in no file yet, and the file's own grid places its values
    assert costs(results) == before
    # once another file holds the new benchmark, lacking it is a gap again
    other = {"commit_hash": "b" * 40, "result_columns": COLUMNS, "results": {
        "bench_probes.ProbeFailure.track_lowering_failed": _entry([0, 0, 1], 1.0)}}
    (results / "box" / "bbbbbbbb-env.json").write_text(json.dumps(other))
    assert costs(results) == []  # neither file holds the whole gate


def test_excused_gaps_alone_never_promote_a_file(results, monkeypatch):
    _tiers(monkeypatch, r"^bench_probes\.", r"^bench_probes\.|^bench_new\.", ABSENT)
    benchmarks = json.loads((results / "benchmarks.json").read_text())
    benchmarks["bench_new.Only.track_x"] = _meta("bench_new.Only.track_x", [], "track", None)
    (results / "benchmarks.json").write_text(json.dumps(benchmarks))
    assert [c.tier for c in costs(results)] == ["gate"]


def test_a_recording_beside_another_is_not_judged_alone(results, monkeypatch):
    """Two lanes, one per core: each commit's benchmarks ran while the other's did, so a missed target
    reads "missed beside 1 run" and names the other commit; a file of another machine at the same time,
    or one of this machine before, is not beside it; a file alone that misses is MISSED."""
    _tiers(monkeypatch, r"^bench_probes\.|PolicyPartition", ABSENT, ABSENT)
    monkeypatch.setitem(TARGET_MINUTES, "gate", 1.0)  # the fixture's gate costs about 2.5 min
    t0 = 1_780_000_000_000
    coverage, work = PROBE_TRACKS
    policy = catalogue.POLICY_WORK.name
    _started(results, {coverage: (t0, 30.0), work: (t0 + 30_000, 30.0), policy: (t0 + 60_000, 30.0)})
    data = json.loads((results / "box" / "aaaaaaaa-env.json").read_text())
    # (machine, commit letter, ms later): the other lane, another machine at once, this machine before
    for machine, letter, shift in (("box", "b", 45_000), ("gpu", "c", 0), ("box", "d", -600_000)):
        moved = json.loads(json.dumps(data)) | {"commit_hash": letter * 40}
        for row in moved["results"].values():
            if row[COLUMNS.index("started_at")] is not None:
                row[COLUMNS.index("started_at")] += shift
        (results / machine).mkdir(exist_ok=True)
        (results / machine / f"{letter * 8}-env.json").write_text(json.dumps(moved))
    found = {(r.machine, r.commit[0]): r for r in costs(results)}
    assert found["box", "a"].beside == ["b" * 40] and found["box", "b"].beside == ["a" * 40]
    assert found["box", "a"].verdict == "missed beside 1 run"
    assert found["gpu", "c"].beside == [] and found["box", "d"].beside == []
    assert found["box", "d"].verdict == "MISSED" and found["box", "d"].to_json()["verdict"] == "MISSED"


def test_cost_command_reads_any_results_dir(results):
    done = subprocess.run([sys.executable, "-m", "vkbench", "cost", "--results", str(results), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["costs"]
    assert {r["tier"] for r in rows} <= set(TIERS) and all(0 < r["efficiency"] <= 1.5 for r in rows)
    missing = subprocess.run([sys.executable, "-m", "vkbench", "cost", "--results", str(results / "box")],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and re.search(r"no asv results", missing.stderr)


def test_a_setup_cache_recorded_at_another_line_still_counts_for_its_module():
    from vkbench.results.cost import _used_cache

    known = {"bench_probes:20", "bench_policies:2"}
    used = {"bench_probes:20"}
    old_only = {"bench_probes:19"}  # a file recorded before the source moved
    both = {"bench_probes:19", "bench_probes:20"}  # re-recorded since: the older run's duration stays in it
    assert _used_cache("<setup_cache bench_probes:20>", used, known, both)
    assert _used_cache("<setup_cache bench_probes:19>", used, known, old_only)  # the source moved since
    assert not _used_cache("<setup_cache bench_probes:19>", used, known, both)  # not this run's cost
    assert not _used_cache("<setup_cache bench_policies:2>", used, known, old_only)  # not in the tier
    assert not _used_cache("<build>", used, known, both)


def test_record_cost_tracks_recorded_under_their_former_names_count_for_their_tier() -> None:
    """Records made before the RecordCost* rename still count their record's cost in the gate tier. The
    former class names are spelled from today's (retired names stand only in the suite's catalogue)."""
    from vkbench.results import cost

    former = {b.name: b.name.replace(".RecordCost", ".", 1).replace(".track_", "Work.track_", 1)
              for b in (catalogue.POLICY_WORK, catalogue.VLA_WORK, catalogue.POLICY_LOWERING_WORK)}
    for now, before in former.items():
        assert before != now and cost.today(before) == now
    assert cost.today(catalogue.POLICY_CPU_OPS.name) == catalogue.POLICY_CPU_OPS.name
    assert cost.today(catalogue.PROBE_WORK.name) == catalogue.PROBE_WORK.name
    old_partition = former[catalogue.POLICY_WORK.name]
    assert cost._selected(old_partition, [["'act/model'"]], TIERS["gate"]) == [0]
