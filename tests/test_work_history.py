"""``vkbench history work``: every step of the counted partitioner work along the main line.

Four recorded commits of four classes in a temp dir: one suite at three of them, another at the last
(vkbench's own change: never a step). Between the first two only ``fusable_patterns`` moves, by more
than the count's noise; between the second and third by one event (noise). Read through the CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from asv_json import SUITE, write_result

from vkbench.cli import main
from vkbench.commits.classes import Classes, CommitClass
from vkbench.results.asv_files import read_dir
from vkbench.results.work_history import work_history
from vkbench.suite import catalogue

BASE, C0, C1, C2, C3 = (c * 40 for c in "a0123")
EVENTS = catalogue.PARTITION_EVENTS.name
BLOCKS, PHASES = ["50"], ["'fusable_patterns'", "'propose_partitions'", "'total'"]


def _work(fusable: int, propose: int, version: str = SUITE) -> list:
    return [[fusable, propose, fusable + propose], [BLOCKS, PHASES], version, 1, 1.0]


@pytest.fixture
def results(tmp_path: Path) -> Path:
    upstream = tmp_path / "results" / "upstream"
    for date, (commit, fusable, propose, version) in enumerate(
            ((C0, 3000, 4000, SUITE), (C1, 3100, 4000, SUITE), (C2, 3101, 4000, SUITE),
             (C3, 9999, 9999, "suite-fedcba9876543210")), start=1):
        write_result(upstream, commit, date, {EVENTS: _work(fusable, propose, version)})
    Classes("gate", f"{BASE[:8]}..{C3[:8]}", [
        CommitClass(C0, "g0", "1.5.0", [C0]),
        CommitClass(C1, "g1", "1.5.0", [C1], ["backends/vulkan/partitioner/vulkan_partitioner.py"], "p"),
        CommitClass(C2, "g2", "1.5.0", [C2], ["exir/pass_base.py"], "exir: q"),
        CommitClass(C3, "g3", "1.5.0", [C3], ["exir/program/_program.py"], "r")]).write(
        tmp_path / "results" / "history" / "classes-gate.json")
    return tmp_path / "results"


def test_every_step_of_one_suite_with_the_inputs_its_class_changed(results: Path) -> None:
    classes = Classes.read(results / "history" / "classes-gate.json")
    found = work_history(read_dir(results / "upstream"), classes)
    assert (found.suite, found.commits) == (SUITE, [C0, C1, C2])  # the other suite's record is not compared
    assert found.totals == {"50": [7000, 7100, 7101]}
    first, second = found.steps
    assert (first.commit, first.previous, first.first_class, first.last_class) == (C1, C0, 1, 1)
    assert first.deltas == {"50": {"fusable_patterns": 100, "total": 100}}  # propose_partitions did not move
    assert first.changed == ["backends/vulkan/partitioner/vulkan_partitioner.py"] and not first.noise
    assert first.share("50") == pytest.approx(100 / 7000)
    assert (second.commit, second.changed, second.noise) == (C2, ["exir/pass_base.py"], True)
    other = work_history(read_dir(results / "upstream"), classes, "suite-fedcba9876543210")
    assert (other.commits, other.steps) == ([C3], [])


def test_the_cli_lists_them(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["history", "work", "--results", str(results / "upstream"), "--classes",
            str(results / "history" / "classes-gate.json")]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "fusable_patterns +100 (+1.429%)" in text and "vulkan_partitioner.py" in text
    assert "fusable_patterns +1 (+0.014%) (noise)" in text
    assert "2 steps over 3 main-line records" in text
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [s["commit"] for s in data["steps"]] == [C1, C2] and data["suite"] == SUITE
    assert main(["history", "work", "--results", str(results / "nowhere")]) == 2
