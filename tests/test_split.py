"""``vkbench upstream --split N``: a run's benchmarks dealt to asv processes side by side, then merged."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from vkbench.results import sidecar
from vkbench.results.asv_files import read_file
from vkbench.results.model import Failure, Provenance
from vkbench.runs import split
from vkbench.suite.tiers import GATE

COLUMNS = ["result", "params", "version", "started_at", "duration"]


def test_alternatives_keep_groups_and_classes_whole() -> None:
    assert split.alternatives(GATE) == [
        r"^bench_probes\.",
        r"^bench_partition\.(?!PartitionWithoutHorizontalFusion|PartitionWork\.)\w+\.\w+\((50|100|200)[,)]",
        r"^bench_partition\.PartitionWork\.\w+\((50|100)[,)]",
        r"^bench_policies\.PolicyPartition",
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


def test_a_processs_files_merge_into_the_results_folder(tmp_path: Path) -> None:
    into, part = tmp_path / "results", tmp_path / "part"
    kept = _result(into, {"bench_a.A.track_x": [[1], [["'p'"]], "v1", 1000, 1.0],
                          "bench_b.B.track_y": [[2], [["'p'"]], "v1", 1000, 1.0]},
                   {"<setup_cache bench_a:1>": 5.0, "<build>": 2.0})
    sidecar.merge(kept, Provenance(tier="gate"),
                  patterns={"bench_a.A.track_x": "a", "bench_b.B.track_y": "b"})
    (into / "benchmarks.json").write_text(json.dumps({"bench_a.A.track_x": {"v": 1}, "version": 2}))
    # the process's folder was seeded with the file: bench_a's row is the seed's (same start), so it
    # is not the process's to write, whatever it holds
    done = _result(part, {"bench_a.A.track_x": [[99], [["'p'"]], "v1", 1000, 1.0],
                          "bench_b.B.track_y": [[3], [["'p'"]], "v2", 9000, 4.0]},
                   {"<setup_cache bench_b:1>": 7.0, "<build>": 3.0})
    failure = Failure(stage="load", error="boom")
    sidecar.merge(done, Provenance(tier="gate", bench_pattern="b"),
                  [("bench_b.B.track_y", ["p"], failure), ("bench_a.A.track_x", ["p"], failure)],
                  patterns={"bench_a.A.track_x": "a-seeded", "bench_b.B.track_y": "b"})
    (part / "benchmarks.json").write_text(json.dumps({"bench_b.B.track_y": {"v": 2}, "version": 2}))

    assert split.merge_results([part], into) == [kept]
    merged = read_file(kept)
    assert merged.results["bench_a.A.track_x"].values == [1]  # kept: the part did not run it
    rerun = merged.results["bench_b.B.track_y"]
    assert rerun.values == [3] and rerun.version == "v2"
    assert merged.durations == {"<setup_cache bench_a:1>": 5.0, "<setup_cache bench_b:1>": 7.0,
                                "<build>": 3.0}
    assert merged.sidecar.patterns == {"bench_a.A.track_x": "a", "bench_b.B.track_y": "b"}
    assert merged.sidecar.failures[("bench_b.B.track_y", ("p",))].error == "boom"
    assert ("bench_a.A.track_x", ("p",)) not in merged.sidecar.failures
    assert json.loads((into / "benchmarks.json").read_text()) == {
        "bench_a.A.track_x": {"v": 1}, "bench_b.B.track_y": {"v": 2}, "version": 2}


def test_a_new_commit_is_copied_and_a_foreign_file_refused(tmp_path: Path) -> None:
    into, part = tmp_path / "results", tmp_path / "part"
    new = _result(part, {"bench_a.A.track_x": [[1], [["'p'"]], "v1", 1000, 1.0]}, {}, commit="b" * 40)
    [written] = split.merge_results([part], into)
    assert written == into / "box" / new.name and (into / "box" / "machine.json").is_file()
    assert read_file(written).results["bench_a.A.track_x"].values == [1]
    other = json.loads(new.read_text()) | {"env_name": "another-env"}
    other["results"]["bench_a.A.track_x"][3] = 2000  # a row run again, in another environment
    new.write_text(json.dumps(other))
    with pytest.raises(ValueError, match="env_name"):
        split.merge_results([part], into)


def test_each_process_gets_its_own_results_and_environments(tmp_path: Path) -> None:
    config = tmp_path / "upstream.conf.json"
    config.write_text(json.dumps({"results_dir": "results", "env_dir": "/x/.asv/env", "repo": "r"}))
    recorded = _result(tmp_path / "results", {"bench_a.A.track_x": [[1], [["'p'"]], "v1", 1000, 1.0]}, {})
    sidecar.merge(recorded, Provenance(tier="gate"))
    seeded_config, seeded = split.part_config(config, 0, tmp_path / "seeded", tmp_path / "results", "box")
    assert sorted(p.name for p in (seeded / "box").iterdir()) == sorted(
        p.name for p in recorded.parent.iterdir())  # asv keeps earlier points there, as in place
    first, first_results = split.part_config(config, 0, tmp_path / "state")
    second, second_results = split.part_config(config, 1, tmp_path / "state")
    assert json.loads(first.read_text())["env_dir"] == "/x/.asv/env"  # the run's own
    assert json.loads(second.read_text())["env_dir"] == "/x/.asv/env-split-1"
    assert first_results != second_results and first_results.is_dir() and not any(first_results.iterdir())
    assert json.loads(second.read_text())["results_dir"] == str(second_results)


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
    from vkbench.runs.upstream import _run_split

    stub = tmp_path / "asv_stub.py"
    stub.write_text(STUB_ASV)
    config = tmp_path / "upstream.conf.json"
    results = tmp_path / "results"
    config.write_text(json.dumps({"results_dir": str(results), "env_dir": str(tmp_path / "env")}))
    command = [sys.executable, str(stub), "run", "--config", str(config), "-b", "^bench_a|^bench_b", "HEAD^!"]
    code = _run_split(command, dict(os.environ), config, results, 2, tmp_path / "state", "box", "gate",
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


def test_a_row_one_process_wrote_is_not_undone_by_anothers_seed(tmp_path: Path) -> None:
    """Both folders start as copies of the results; each rewrites its own rows, keeps the others."""
    into = tmp_path / "results"
    seed = {"bench_a.A.track_x": [[1], [["'p'"]], "v1", 1000, 1.0],
            "bench_b.B.track_y": [[2], [["'p'"]], "v1", 1000, 1.0]}
    target = _result(into, seed, {})
    _result(tmp_path / "p0", seed | {"bench_a.A.track_x": [[10], [["'p'"]], "v1", 5000, 1.0]}, {})
    _result(tmp_path / "p1", seed | {"bench_b.B.track_y": [[20], [["'p'"]], "v1", 6000, 1.0]}, {})
    assert split.merge_results([tmp_path / "p0", tmp_path / "p1"], into) == [target]
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
