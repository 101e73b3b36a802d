"""The runtime over upstream commits: rungs and step limits per machine, and rung steps as events.

A tiny results tree in a temp dir: one runtime machine that recorded ``ProbeLadder`` at three upstream
commits (runtime classes 0, 1 and 3; files dated out of order, so the order must come from the classes),
a step limit at one of them only, and a lowering machine beside it. Between classes 0 and 1 one probe
starts to load and another stops loading (exact: adjacent classes); at class 3 the suite changed, so
its step is left out. Read through the CLI (``vkbench changes --json`` and its text), the changes page
and the runtime page.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from asv_json import SUITE, count_row, write_result

from vkbench.cli import main
from vkbench.commits.classes import Classes, CommitClass
from vkbench.results import sidecar
from vkbench.results.asv_files import read_dir
from vkbench.results.events import explain
from vkbench.results.model import Failure
from vkbench.results.runtime_timeline import runtime_steps, timelines
from vkbench.site import changes_page, runtime_page
from vkbench.site.load import load_site_data
from vkbench.site.runtime_rows import default_cap
from vkbench.suite import catalogue

START, C0, C0B, C1, C2, C3 = (c * 40 for c in "012345")
LADDER, LIMIT, CPU = catalogue.PROBE_LADDER.name, catalogue.STEP_LIMIT.name, catalogue.PROBE_CPU_OPS.name
MACHINE = "lavapipe-test-tracer-off"
PROBES = ["'probe/mish'", "'probe/index_dim1'"]
RUNNERS = ["'python'", "'native'"]
NAN = math.nan
IVEC = "VecUtils.h:367 make_ivec2: (ints.size() == 2) is false!"
TENSOR_REF = "Value.h:262: (isTensorRef()) is false!"
LINEAR = "backends/vulkan/runtime/graph/ops/impl/Linear.cpp"


def _ladder(mish: int, index: int, version: str = SUITE) -> list:
    """``ProbeLadder`` over probe x runner: the Python runner is n/a here (NaN), the C++ runner records."""
    return [[NAN, mish, NAN, index], [PROBES, RUNNERS], version, 1, 1.0]


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    upstream = root / "upstream"
    # (commit, date, mish rung, index_dim1 rung, suite): mish 3 -> 0 and index_dim1 0 -> 3 at C1
    for commit, date, mish, index, version in ((C1, 1, 0, 3, SUITE), (C0, 3, 3, 0, SUITE),
                                                 (C3, 2, 0, 0, "suite-fedcba9876543210")):
        rows = {LADDER: _ladder(mish, index, version)}
        if commit == C1:
            rows[LIMIT] = [[NAN, 2977], [RUNNERS], version, 1, 1.0]
        path = write_result(upstream, commit, date, rows, machine=MACHINE)
        stopped = {"probe/mish": mish, "probe/index_dim1": index}
        lines = {"probe/mish": IVEC, "probe/index_dim1": TENSOR_REF}
        sidecar.merge(path, failures=[(LADDER, (probe, "native"), Failure("load", lines[probe]))
                                      for probe, missed in stopped.items() if missed])
    write_result(upstream, C0, 1, {CPU: count_row(["'mish'"], [2])}, machine="x86-lowering")
    history = root / "history"
    Classes("gate", f"{START[:8]}..{C3[:8]}", [CommitClass(C0, "g0", "1.5.0", [C0, C0B, C1, C2, C3])]).write(
        history / "classes-gate.json")
    Classes("runtime", f"{START[:8]}..{C3[:8]}", [
        CommitClass(C0, "r0", "1.5.0", [C0, C0B]),
        CommitClass(C1, "r1", "1.5.0", [C1], [LINEAR],
                    "[ET-VK] Fix linear (#30001)", "30001"),
        CommitClass(C2, "r2", "1.5.0", [C2], ["backends/vulkan/runtime/vk_api/Pipeline.cpp"]),
        CommitClass(C3, "r3", "1.5.0", [C3], ["backends/vulkan/runtime/VulkanBackend.cpp"])]).write(
        history / "classes-runtime.json")
    return root


def _runtime_classes(root: Path) -> Classes:
    return Classes.read(root / "history" / "classes-runtime.json")


def test_the_timeline_follows_the_runtime_classes(results: Path) -> None:
    (timeline,) = timelines(read_dir(results / "upstream"), _runtime_classes(results))
    assert timeline.machine == MACHINE  # the lowering machine records no runtime value
    assert [c.label for c in timeline.columns] == [f"{C0[:8]}, runtime class 0", f"{C1[:8]}, runtime class 1",
                                                   f"{C3[:8]}, runtime class 3"]
    mish = timeline.rungs[(LADDER, "probe/mish", "native")]
    assert (mish[C0].name, mish[C0].reason, mish[C1].name) == ("lowered", f"load: {IVEC}", "matches")
    assert (LADDER, "probe/mish", "python") not in timeline.rungs  # n/a is no rung
    assert timeline.short_of_cap == {"native": {C1: 2977}}
    steps = [(key[1], a.commit, b.commit) for key, a, b in timeline.steps()]
    assert sorted(steps) == [("probe/index_dim1", C0, C1), ("probe/index_dim1", C1, C3),
                             ("probe/mish", C0, C1)]


def test_a_rung_step_is_an_event_like_a_lowering_step(results: Path) -> None:
    table = explain(read_dir(results / "upstream"), None, {}, None, _runtime_classes(results))
    (event,) = table.events
    assert (event.commit, event.exact, event.subject, event.pr, event.files) == (
        C1, True, "[ET-VK] Fix linear (#30001)", "30001", [LINEAR])
    assert event.regression  # index_dim1 stops loading
    assert [(r.param, r.values(), r.machine) for r in event.rows] == [
        ("probe/index_dim1, native", "matches -> lowered", MACHINE),
        ("probe/mish, native", "lowered -> matches", MACHINE)]
    assert event.reasons == [f"load: {TENSOR_REF}", f"load: {IVEC}"]
    assert "runtime steps not confirmed yet" in event.confirmation
    assert "--set-commit-hash SHA --machine lavapipe-test-tracer-off" in event.repro
    assert f"for SHA in {C1[:8]}^ {C1[:8]}" in event.repro and "--tracer off" in event.repro
    # class 3 was recorded by another suite: its step is left out and counted, never a row
    assert table.left_out_counts()["suite changed"] == 1
    assert table.steps_to_confirm() == []  # history confirm's aot build has no Vulkan runtime
    keys = [step.key for step in table.runtime_steps_to_confirm()]
    assert [(k.machine, k.param, k.previous, k.commit) for k in keys] == [
        (MACHINE, "probe/index_dim1, native", C0, C1), (MACHINE, "probe/mish, native", C0, C1)]
    # one commit recorded: no neighbours, no steps
    only = read_dir(results / "upstream")
    only.files = [f for f in only.files if f.commit == C1]
    assert runtime_steps(only, _runtime_classes(results)) == ([], [])


def test_the_cli_and_the_pages_tell_it(results: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    args = ["changes", "--results", str(results / "upstream"), "--classes",
            str(results / "history" / "classes-gate.json")]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (event,) = out["events"]
    assert event["commit"] == C1 and event["regression"] and f"load: {TENSOR_REF}" in event["reasons"]
    assert {(s["param"], s["before"], s["after"], s["machine"]) for s in event["steps"]} == {
        ("probe/index_dim1, native", 0, 3, MACHINE), ("probe/mish, native", 3, 0, MACHINE)}
    assert out["left_out"]["suite changed"] == 1
    assert main(args) == 0
    text = capsys.readouterr().out
    assert text.startswith("1 events (1 regressing), 2 steps")
    assert f"REGRESSION {C1[:8]} #30001 [ET-VK] Fix linear (#30001)" in text
    assert "matches -> lowered" in text and f"{C1[:8]} on {MACHINE}" in text

    html_root = tmp_path / "html"
    html_root.mkdir()
    data = load_site_data(html_root, results, coverage_sets=[])
    changes = changes_page.PAGE.write(html_root, data).read_text()
    assert f"id='event-{C1[:8]}'" in changes and "lowered → matches" in changes
    assert f"{C1[:8]} on {MACHINE}" in changes and TENSOR_REF in changes
    page = runtime_page.PAGE.write(html_root, data).read_text()
    assert f"<h3>{MACHINE} <small>(3 commits recorded, 3 rung steps between neighbours)</small></h3>" in page
    assert page.count("runtime class 1</small>") == 2  # the rung grid and the step-limit table
    assert f"title='lowered: load: {IVEC}'" in page.replace("&#x27;", "'")
    cap = default_cap()
    assert f"<td>{cap - 2977}</td>" in page and page.count("not recorded</td>") == 2 + 3  # C0, C3; dispatch
    # framed: the three differences from the previous record (the one across the suite change included)
    assert page.count("rung r3 step") == 1 and page.count("rung r0 step") == 2


def test_runtime_steps_are_confirmed_each_side_on_its_own_runner(results: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``history confirm --runners DIR``: each side's runner (its own commit's, or a runtime-class mate's)
    measures the step's points; equal rungs reproduce, and the verdict is stored and shown on the event.
    ``measure`` (the real ladder functions over a real pte_runner) is replaced: CI has no Vulkan build."""
    from vkbench.runs import confirm_runtime

    runners = tmp_path / "runners"
    for commit in (C0B, C1):  # C0's runner is its class mate C0B's
        (runners / f"runner-{commit[:8]}").mkdir(parents=True)
        (runners / f"runner-{commit[:8]}" / "pte_runner").write_text("")
    classes = _runtime_classes(results)
    assert confirm_runtime.runner_for(C0, runners, classes).parent.name == f"runner-{C0B[:8]}"
    with pytest.raises(confirm_runtime.RunnerMissing, match=f"no runner for {C3[:8]}"):
        confirm_runtime.runner_for(C3, runners, classes)
    measured = {f"runner-{C0B[:8]}": {"probe/mish, native": 3.0, "probe/index_dim1, native": 0.0},
                f"runner-{C1[:8]}": {"probe/mish, native": 0.0, "probe/index_dim1, native": 0.0}}
    monkeypatch.setattr(confirm_runtime, "measure", lambda runner, steps: measured[runner.parent.name])
    table = explain(read_dir(results / "upstream"), None, {}, None, classes)
    done = confirm_runtime.confirm_runtime(results / "upstream", table.runtime_steps_to_confirm(), runners,
                                           classes, MACHINE, log=lambda line: None)
    verdicts = {c.param: (c.reproduced, c.machine, c.measured_before, c.measured_after) for c in done}
    assert verdicts == {"probe/mish, native": (True, MACHINE, 3.0, 0.0),  # recorded 3 -> 0
                        "probe/index_dim1, native": (False, MACHINE, 0.0, 0.0)}  # recorded 0 -> 3: not again
    assert all(c.suite and c.suite.startswith("suite-") for c in done)
    from vkbench.results import confirmations

    # kept: the command, no asv exit status (no asv ran), what each side's runner measured
    assert {(tuple(c.command[-4:]), c.exit_code) for c in done} == {
        (("--runners", str(runners), "--machine", MACHINE), None)}
    kept = results / "upstream" / done[0].files / confirmations.MEASURED
    assert json.loads(kept.read_text())["after"] == measured[f"runner-{C1[:8]}"]
    assert confirmations.audit(results / "upstream").problems == []
    assert confirm_runtime.confirm_runtime(results / "upstream", table.runtime_steps_to_confirm(), runners,
                                           classes, MACHINE, log=lambda line: None) == []  # stored: kept
    from vkbench.results.confirmations import path_for, read

    again = explain(read_dir(results / "upstream"), None, read(path_for(results / "upstream")), None, classes)
    assert [r.param for r in again.dropped] == ["probe/index_dim1, native"]
    assert [(r.param, r.confirmed) for e in again.events for r in e.rows] == [("probe/mish, native", True)]


def test_runners_of_one_machine_confirm_only_its_steps(results: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A tracer-on machine steps between the same commits: the runners (one machine's builds) must not
    answer its step. Without ``--machine`` the CLI names both machines and measures nothing; with it,
    only that machine's steps are measured, and the other's still wait."""
    from vkbench.runs import confirm_runtime

    on = "lavapipe-test-tracer-on"
    for commit, date, mish in ((C0, 3, 3), (C1, 1, 0)):
        write_result(results / "upstream", commit, date, {LADDER: _ladder(mish, 0)}, machine=on)
    runners = tmp_path / "runners"
    for commit in (C0, C1):
        (runners / f"runner-{commit[:8]}").mkdir(parents=True)
        (runners / f"runner-{commit[:8]}" / "pte_runner").write_text("")
    asked: list[str] = []

    def measure(runner: Path, steps: list) -> dict[str, float]:
        asked.extend(step.key.machine for step in steps)
        return {step.key.param: 0.0 for step in steps}

    monkeypatch.setattr(confirm_runtime, "measure", measure)
    gate = str(results / "history" / "classes-gate.json")
    args = ["history", "confirm", "--runners", str(runners), "--results", str(results / "upstream"),
            "--classes", gate]
    assert main(args) == 2 and asked == []
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error == (f"vkbench history: error: runtime steps of 2 machines wait ({MACHINE}, {on}): "
                     "--runners holds one machine's builds, name it with --machine")
    assert main([*args, "--machine", on]) == 0
    assert set(asked) == {on}
    table = explain(read_dir(results / "upstream"), None, {}, None, _runtime_classes(results))
    from vkbench.results.confirmations import path_for, pending, read

    waiting = pending(table.runtime_steps_to_confirm(), read(path_for(results / "upstream")))
    assert {step.key.machine for step in waiting} == {MACHINE}


def test_a_machine_with_step_limits_only_draws_no_empty_ladder(results: Path, tmp_path: Path) -> None:
    """The tracer-on machine records ``StepLimit`` alone: its limits over commits, a line for the ladder."""
    for commit, date in ((C0, 3), (C1, 1)):
        write_result(results / "upstream", commit, date, {LIMIT: [[NAN, 2977], [RUNNERS], SUITE, 1, 1.0]},
                     machine="lavapipe-test-tracer-on")
    html_root = tmp_path / "html"
    html_root.mkdir()
    data = load_site_data(html_root, results, coverage_sets=[])
    page = runtime_page.PAGE.write(html_root, data).read_text()
    section = page[page.index("<h3>lavapipe-test-tracer-on"):]
    section = section[:section.index("</table>", section.index("class='limits'"))]
    assert "No ladder recorded on this machine." in section and "class='rungs'" not in section
    cap = default_cap()
    assert section.count(f"<td>{cap - 2977}</td>") == 2
