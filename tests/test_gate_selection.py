"""What ``vkbench gate`` measures: the compared selection, and the narrower one it measures again."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from vkbench.paths import ROOT
from vkbench.results import verdict
from vkbench.results.asv_files import read_dir
from vkbench.results.confirmations import asv_name
from vkbench.runs import gate_run as gate
from vkbench.suite.identity import suite_version
from vkbench.suite.tiers import COMPARED

WORK = "bench_partition.PartitionWork.track_partition_events"
COUNT = "bench_partition.PartitionScalingRecord.track_partitions"
PROBE = "bench_probes.ProbeCoverage.track_cpu_ops"


def _row(benchmark: str, point: str, phase: str = "") -> verdict.Row:
    return verdict.Row(verdict.REGRESSION, benchmark, point, phase, 100.0, 110.0)


def _selects(pattern: str, benchmark: str, point: str) -> bool:
    return re.search(pattern, asv_name(benchmark, point)) is not None


def test_the_default_selection_leaves_the_policies_out_and_policies_bring_them_back() -> None:
    assert gate.selection(policies=True) == COMPARED
    plain = gate.selection(policies=False)
    assert not _selects(plain, "bench_policies.PolicyPartition.track_cpu_ops", "act/model")
    assert _selects(plain, WORK, "50, is_node_supported") and _selects(plain, PROBE, "mish")


def test_only_what_selects_a_suspect_is_measured_again() -> None:
    again = gate.again(COMPARED, [_row(WORK, "50, is_node_supported", "is_node_supported"),
                                  _row(WORK, "50, total", "total")])
    assert _selects(again, WORK, "100, propose_partitions")  # every phase and size of it comes along
    assert not _selects(again, PROBE, "mish") and not _selects(again, COUNT, "50")
    probe_again = gate.again(COMPARED, [_row(PROBE, "mish")])
    assert _selects(probe_again, "bench_probes.ProbeFailure.track_lowering_failed", "mish")
    assert not _selects(probe_again, WORK, "50, total")


def test_a_suspect_no_alternative_selects_measures_everything_again() -> None:
    assert gate.again(r"^bench_probes\.", [_row(WORK, "50, total")]) == r"^bench_probes\."


def _side_file(folder: Path, commit: str, version: str) -> Path:
    path = folder / "box" / f"{commit[:8]}-env.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "version": 2, "commit_hash": commit, "env_name": "env", "date": 1, "params": {}, "python": "3.12",
        "requirements": {}, "env_vars": {}, "result_columns": ["result", "params", "version"],
        "results": {PROBE: [[3.0], [["'mish'"]], version]}, "durations": {}}))
    (path.parent / "machine.json").write_text(json.dumps({"machine": "box", "version": 1}))
    (folder / "benchmarks.json").write_text(json.dumps({PROBE: {"unit": "ops"}, "version": 2}))
    return path


def test_a_kept_side_is_taken_only_under_the_suite_that_measured_it(tmp_path: Path) -> None:
    """A side kept by an earlier gate run is taken while its benchmarks' versions are the ones the suite of
    the asv config (its ``benchmark_dir``) gives them; under another suite (another grid in a copy of
    ``benchmarks/``, an older digest) or for another commit it is measured again. Keeping copies it whole."""
    commit = "c" * 40
    config = tmp_path / "asv.conf.json"
    config.write_text(json.dumps({"benchmark_dir": str(ROOT / "benchmarks")}))
    now = suite_version("bench_probes", "ProbeCoverage")
    assert gate.versions_now([PROBE], config) == {PROBE: now}
    _side_file(tmp_path / "measured", commit, now)
    side = read_dir(tmp_path / "measured").files[0]
    gate.keep_side(side, tmp_path / "kept")
    kept = gate.kept_side(tmp_path / "kept", commit, config)
    assert kept is not None and kept.values(PROBE) == {("mish",): 3.0}
    assert gate.kept_side(tmp_path / "kept", "d" * 40, config) is None  # another commit
    assert gate.kept_side(tmp_path / "nothing", commit, config) is None
    _side_file(tmp_path / "older", commit, "suite-" + "0" * 16)
    assert gate.kept_side(tmp_path / "older", commit, config) is None  # another suite's measurement
    trimmed = tmp_path / "copy" / "benchmarks"  # the gate tests' grid: a copy with an override appended
    shutil.copytree(ROOT / "benchmarks", trimmed, ignore=shutil.ignore_patterns("__pycache__"))
    with (trimmed / "common.py").open("a") as handle:
        handle.write("\nPROBE_NAMES = ['mish']\n")
    other = tmp_path / "copy" / "asv.conf.json"
    other.write_text(json.dumps({"benchmark_dir": "benchmarks"}))  # relative: to the config's folder
    assert gate.versions_now([PROBE], other)[PROBE] != now
    assert gate.kept_side(tmp_path / "kept", commit, other) is None
    _side_file(tmp_path / "trimmed", commit, gate.versions_now([PROBE], other)[PROBE])
    assert gate.kept_side(tmp_path / "trimmed", commit, other) is not None


def test_the_kept_folder_depends_on_the_selection_and_the_config(tmp_path: Path) -> None:
    config = tmp_path / "asv.conf.json"
    config.write_text("{}")
    one = gate.kept_folder(config, "box", "c" * 40, "^a")
    assert one == gate.kept_folder(config, "box", "c" * 40, "^a")
    assert one != gate.kept_folder(config, "box", "c" * 40, "^b")
    config.write_text('{"env_dir": "other"}')
    assert one != gate.kept_folder(config, "box", "c" * 40, "^a")
    assert one.parent == tmp_path / gate.KEPT / "box"
