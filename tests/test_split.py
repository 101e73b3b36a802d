"""``vkbench upstream --split N``: a run's benchmarks dealt to asv processes side by side, each merged as
a recording of its own (:mod:`vkbench.results.recording`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from vkbench.results import sidecar
from vkbench.results.asv_files import read_file
from vkbench.results.model import Provenance
from vkbench.results.recording import RecordingError, recording
from vkbench.runs import benchmark_split as split
from vkbench.suite.tiers import GATE

COLUMNS = ["result", "params", "version", "started_at", "duration"]


def test_alternatives_keep_groups_and_classes_whole() -> None:
    assert split.alternatives(GATE) == [
        r"^bench_probes\.",
        r"^bench_partition\.(?!PartitionWithoutHorizontalFusion|PartitionWork\.)\w+\.\w+\((50|100|200)[,)]",
        r"^bench_partition\.PartitionWork\.\w+\((50|100)[,)]",
        r"^bench_policies\.PolicyPartition\.",
        r"^bench_policies\.RecordCostPolicyPartition\.",
    ]
    assert split.alternatives(r"a[|]b|c\|d|e") == ["a[|]b", r"c\|d", "e"]
    assert "|".join(split.alternatives(GATE)) == GATE


def test_the_heaviest_alternative_goes_to_the_lightest_process() -> None:
    seconds = {"probes": 137.0, "time": 72.0, "work": 27.0, "policies": 158.0}
    assert split.deal("probes|time|work|policies", 2, seconds) == ["policies|work", "probes|time"]
    assert split.deal("probes|time", 4, seconds) == ["probes", "time"]  # no empty process
    assert split.deal("a|b|c", 1, {}) == ["a|b|c"]
    with pytest.raises(ValueError):
        split.deal("a", 0, {})


def test_a_benchmark_is_never_dealt_to_two_processes() -> None:
    names = ["bench_a.A.track_x(50)", "bench_a.A.track_x(100)", "bench_b.B.track_y"]
    pattern = r"track_x\(50\)|bench_b|track_x\(100\)"
    assert split.units(pattern, names) == ["bench_b", r"track_x\(50\)|track_x\(100\)"]
    assert split.deal(pattern, 3, {}, names) == ["track_x\\(50\\)|track_x\\(100\\)", "bench_b"]
    assert split.units(pattern, []) == split.alternatives(pattern)  # nothing recorded yet: as given


def test_benchmarks_sharing_a_setup_cache_stay_in_one_process() -> None:
    """``PolicyPartition`` and ``RecordCostPolicyPartition`` read one record per entry, made by their
    module's ``setup_cache``: dealt apart, two processes would each lower every entry."""
    names = ["bench_p.Counts.track_x('a')", "bench_p.RecordCost.track_s('a')", "bench_q.Q.track_y"]
    caches = {"bench_p.Counts.track_x": "bench_p:81", "bench_p.RecordCost.track_s": "bench_p:81"}
    pattern = r"^bench_p\.Counts\.|^bench_q|^bench_p\.RecordCost\."
    assert split.units(pattern, names, caches) == ["^bench_q", r"^bench_p\.Counts\.|^bench_p\.RecordCost\."]
    assert len(split.deal(pattern, 3, {}, names, caches)) == 2
    assert split.units(pattern, names) == split.alternatives(pattern)  # without the caches: three


def test_the_bench_patterns_of_a_command_are_replaced_by_the_processs() -> None:
    command = ["asv", "run", "-b", "x", "--bench=y", "--bench", "z", "HEAD^!"]
    assert split.selected(command) == "x|z|y"
    assert split.with_bench(command, "p") == ["asv", "run", "HEAD^!", "-b", "p"]


def _result(folder: Path, rows: dict[str, list], durations: dict[str, float], commit: str = "a" * 40) -> Path:
    path = folder / "box" / f"{commit[:8]}-env.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.parent / "machine.json").write_text(json.dumps({"machine": "box", "version": 1}))
    path.write_text(json.dumps({"commit_hash": commit, "env_name": "env", "date": 1, "params": {},
                                "python": "3.12", "requirements": {}, "env_vars": {},
                                "result_columns": COLUMNS, "results": rows, "durations": durations,
                                "version": 2}))
    return path


def test_a_runs_rows_merge_into_the_results_folder(tmp_path: Path) -> None:
    """A run's folder is seeded with the results; the rows it wrote again (started at another time) are
    merged in with their sidecar entries, the seed's rows are not the run's whatever they hold."""
    into = tmp_path / "results"
    kept = _result(into, {"bench_a.A.track_x": [[1], [["'p'"]], "v1", 1000, 1.0],
                          "bench_b.B.track_y": [[2], [["'p'"]], "v1", 1000, 1.0]},
                   {"<setup_cache bench_a:1>": 5.0, "<build>": 2.0})
    sidecar.merge(kept, Provenance(tier="gate", bench_pattern="a|b"),
                  patterns={"bench_a.A.track_x": "a", "bench_b.B.track_y": "b"})
    (into / "benchmarks.json").write_text(json.dumps({"bench_a.A.track_x": {"v": 1}, "version": 2}))
    with recording(into, Provenance(tier="gate", bench_pattern="b")) as run:
        own = run.results / "box" / kept.name
        assert read_file(own).results == read_file(kept).results  # seeded: asv keeps earlier points
        _result(run.results, {"bench_a.A.track_x": [[99], [["'p'"]], "v1", 1000, 1.0],  # the seed's
                              "bench_b.B.track_y": [[3], [["'p'"]], "v2", 9000, 4.0]},
                {"<setup_cache bench_a:1>": 5.0, "<setup_cache bench_b:1>": 7.0, "<build>": 3.0})
        listing = {"bench_b.B.track_y": {"v": 2}, "version": 2}
        (run.results / "benchmarks.json").write_text(json.dumps(listing))
    assert run.written == [kept]
    merged = read_file(kept)
    assert merged.results["bench_a.A.track_x"].values == [1]  # kept: the run did not write it
    rerun = merged.results["bench_b.B.track_y"]
    assert rerun.values == [3] and rerun.version == "v2"
    assert merged.durations == {"<setup_cache bench_a:1>": 5.0, "<setup_cache bench_b:1>": 7.0,
                                "<build>": 3.0}
    assert merged.sidecar.patterns == {"bench_a.A.track_x": "a", "bench_b.B.track_y": "b"}
    assert [(sorted(r.benchmarks), r.provenance.bench_pattern) for r in sidecar.runs(merged.sidecar)] == [
        (["bench_a.A.track_x"], "a|b"), (["bench_b.B.track_y"], "b")]
    assert json.loads((into / "benchmarks.json").read_text()) == {
        "bench_a.A.track_x": {"v": 1}, "bench_b.B.track_y": {"v": 2}, "version": 2}


def test_a_new_commit_is_copied_and_a_foreign_file_refused(tmp_path: Path) -> None:
    into = tmp_path / "results"
    with recording(into, Provenance(bench_pattern="a")) as run:
        new = _result(run.results, {"bench_a.A.track_x": [[1], [["'p'"]], "v1", 1000, 1.0]}, {},
                      commit="b" * 40)
    [written] = run.written
    assert written == into / "box" / new.name and (into / "box" / "machine.json").is_file()
    assert read_file(written).results["bench_a.A.track_x"].values == [1]
    with pytest.raises(RecordingError, match="env_name") as raised:
        with recording(into, Provenance(bench_pattern="a")) as run:
            other = json.loads((run.results / "box" / new.name).read_text()) | {"env_name": "another-env"}
            other["results"]["bench_a.A.track_x"][3] = 2000  # a row run again, in another environment
            (run.results / "box" / new.name).write_text(json.dumps(other))
    assert str(run.results) in str(raised.value) and (run.results / "box" / new.name).is_file()  # kept
    assert read_file(written).env_name == "env"  # not written over


def test_each_process_gets_its_own_environments(tmp_path: Path) -> None:
    config = tmp_path / "upstream.conf.json"
    config.write_text(json.dumps({"results_dir": "results", "env_dir": "/x/.asv/env", "repo": "r"}))
    assert split.part_settings(config, 0) == {}  # the run's own
    assert split.part_settings(config, 1) == {"env_dir": "/x/.asv/env-split-1"}


STUB_ASV = """
import json, os, re, sys, time
args = sys.argv[1:]
conf = json.load(open(args[args.index("--config") + 1]))
pattern = args[args.index("-b") + 1]
folder = os.path.join(conf["results_dir"], "box")
os.makedirs(folder, exist_ok=True)
json.dump({"machine": "box", "version": 1}, open(os.path.join(folder, "machine.json"), "w"))
names = ["bench_a.A.track_x", "bench_b.B.track_y"]
now = int(time.time() * 1000)
rows = {n: [[1], [["'p'"]], "v", now, 0.5] for n in names if re.search(pattern, n + "('p')")}
json.dump({"commit_hash": "a" * 40, "env_name": "env", "date": 1, "params": {}, "python": "3.12",
           "requirements": {}, "env_vars": {}, "result_columns": ["result", "params", "version",
           "started_at", "duration"], "results": rows, "durations": {"<build>": 1.0}, "version": 2},
          open(os.path.join(folder, "aaaaaaaa-env.json"), "w"))
json.dump({n: {"name": n} for n in names}, open(os.path.join(conf["results_dir"], "benchmarks.json"), "w"))
time.sleep(1)
sys.exit(3 if "bench_b" in pattern else 0)
"""


def test_a_split_run_merges_what_each_process_recorded(tmp_path: Path) -> None:
    from vkbench.runs.upstream_asv import _run_split

    stub = tmp_path / "asv_stub.py"
    stub.write_text(STUB_ASV)
    config = tmp_path / "upstream.conf.json"
    results = tmp_path / "results"
    config.write_text(json.dumps({"results_dir": str(results), "env_dir": str(tmp_path / "env")}))
    command = [sys.executable, str(stub), "run", "--config", str(config), "-b", "^bench_a|^bench_b", "HEAD^!"]
    code = _run_split(command, dict(os.environ), config, results, 2, "box", "gate",
                      lambda record: Provenance(base_wheel="1.5.1"))
    assert code == 3  # the worst process's exit status
    [path] = sorted((results / "box").glob("*-env.json"))
    record = read_file(path)
    assert sorted(record.results) == ["bench_a.A.track_x", "bench_b.B.track_y"]
    assert record.sidecar.patterns == {"bench_a.A.track_x": "^bench_a", "bench_b.B.track_y": "^bench_b"}
    provenance = record.sidecar.provenance
    assert provenance.bench_pattern == "^bench_a|^bench_b" and provenance.tier == "gate"
    assert provenance.base_wheel == "1.5.1"  # each process's file was stamped before the merge
    started = [r.started_at for r in record.results.values()]
    assert max(started) - min(started) < 1000  # side by side, not one after the other
    assert {r.provenance.bench_pattern: sorted(r.benchmarks) for r in sidecar.runs(record.sidecar)} == {
        "^bench_a": ["bench_a.A.track_x"], "^bench_b": ["bench_b.B.track_y"]}  # each process its own run


def test_a_row_one_process_wrote_is_not_undone_by_anothers_seed(tmp_path: Path) -> None:
    """Both folders start as copies of the results; each rewrites its own rows, keeps the others."""
    into = tmp_path / "results"
    seed = {"bench_a.A.track_x": [[1], [["'p'"]], "v1", 1000, 1.0],
            "bench_b.B.track_y": [[2], [["'p'"]], "v1", 1000, 1.0]}
    target = _result(into, seed, {})
    with recording(into, Provenance(bench_pattern="a")) as first, \
            recording(into, Provenance(bench_pattern="b")) as second:
        _result(first.results, seed | {"bench_a.A.track_x": [[10], [["'p'"]], "v1", 5000, 1.0]}, {})
        _result(second.results, seed | {"bench_b.B.track_y": [[20], [["'p'"]], "v1", 6000, 1.0]}, {})
    assert first.written == second.written == [target]
    merged = read_file(target)
    assert merged.results["bench_a.A.track_x"].values == [10]
    assert merged.results["bench_b.B.track_y"].values == [20]


@pytest.mark.parametrize(("args", "said"), [
    (["--split", "0", "--", "run", "HEAD^!"], "at least 1 (got 0)"),
    (["--split", "2", "--", "continuous", "a", "b"], "asv run only, not continuous"),
    (["--split", "2", "--", "run", "HEAD^!"], "a -b pattern or --tier"),
])
def test_a_split_the_run_cannot_take_is_one_line(tmp_path: Path, args: list[str], said: str) -> None:
    import subprocess

    done = subprocess.run([sys.executable, "-m", "vkbench", "upstream", "--mirror", str(tmp_path), *args],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2 and said in done.stderr and len(done.stderr.strip().splitlines()) == 1
