"""Confirmations: which steps need re-measuring, how a pair's asv run is asked for, the verdicts on real asv
result files, the stored file (one reader, one writer, a corrupt file refused), and what the changes
table does with them. The asv run itself is tested end to end in tests/test_regression_gate.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from asv_json import SUITE, count_row, timing_row, write_result

from vkbench.cli import main
from vkbench.results import confirmations
from vkbench.results.asv_files import read_dir
from vkbench.results.changes import SAME, TIMING_NOT_CONFIRMED, changes
from vkbench.results.confirmations import ConfirmationsError, Step, StepKey
from vkbench.runs.confirm import asv_args, judge
from vkbench.suite import catalogue

A, B, C = "a" * 40, "b" * 40, "c" * 40
PROBES = ["'mish'", "'elu'"]
CPU = catalogue.PROBE_CPU_OPS.name
TIME = catalogue.PARTITION_TIME.name
EVENTS = catalogue.PARTITION_EVENTS.name


def recorded(root: Path) -> Path:
    """Three commits of one suite: mish 1 -> 2 CPU ops at B, elu 3 -> 2 at C; time_partition(50) 40 %
    slower at B."""
    fast, slow = [[1.0, 1.01, 0.99, 1.0]], [[1.5, 1.52, 1.49, 1.5]]
    write_result(root, A, 1, {CPU: count_row(PROBES, [1, 3]), TIME: timing_row(["50"], fast)})
    write_result(root, B, 2, {CPU: count_row(PROBES, [2, 3]), TIME: timing_row(["50"], slow)})
    write_result(root, C, 3, {CPU: count_row(PROBES, [2, 2]), TIME: timing_row(["50"], slow)})
    return root


def test_the_steps_to_confirm_are_grouped_into_one_run_per_pair(tmp_path: Path) -> None:
    table = changes(read_dir(recorded(tmp_path / "results")))
    assert [(c.param, c.suite, c.confirmed, c.suite_before, c.suite_after) for c in table.changes] == [
        ("mish", SAME, None, SUITE, SUITE), ("elu", SAME, None, SUITE, SUITE)]
    # the timing has no work track and no re-measurement: left out, but waiting to be confirmed
    assert [(s.benchmark, s.param, s.why) for s in table.left_out] == [(TIME, "50", TIMING_NOT_CONFIRMED)]
    steps = table.steps_to_confirm()
    pairs = confirmations.pairs(steps)
    assert [(p.previous, p.commit, p.timing, [s.key.param for s in p.steps]) for p in pairs] == [
        (A, B, False, ["mish"]), (B, C, False, ["elu"]), (A, B, True, ["50"])]
    # the -b pattern selects exactly the pair's points, as asv matches name(params)
    count, timing = pairs[0], pairs[2]
    assert re.search(count.pattern, f"{CPU}('mish')") and not re.search(count.pattern, f"{CPU}('elu')")
    assert re.search(timing.pattern, f"{TIME}(50)") and not re.search(timing.pattern, f"{TIME}(100)")
    command = asv_args(timing, Path("conf.json"), "box", Path("hashes"))
    assert command[3:] == ["run", "--config", "conf.json", "--machine", "box", "--show-stderr", "-b",
                           timing.pattern, "--interleave-rounds", "-a", "rounds=8", "--record-samples",
                           "HASHFILE:hashes"]
    assert "--interleave-rounds" not in asv_args(count, Path("conf.json"), "box", Path("hashes"))


def test_pairs_are_chosen_by_hash_prefixes_so_lanes_can_share_them(tmp_path: Path, capsys) -> None:
    """``--pair PREVIOUS..COMMIT`` (repeatable) keeps only the named pairs, in the order named; a name that
    is malformed or matches no waiting pair is one line and exit 2, before anything is measured."""
    pairs = confirmations.pairs(changes(read_dir(recorded(tmp_path / "results"))).steps_to_confirm())
    assert confirmations.chosen(pairs, []) == pairs
    picked = confirmations.chosen(pairs, ["bbb..ccc", "aa..bb"])
    assert [(p.previous, p.commit, p.timing) for p in picked] == [(B, C, False), (A, B, False), (A, B, True)]
    for bad, why in (("aaa", "expected PREVIOUS..COMMIT"), ("ccc..aaa", "no pair of steps waits there")):
        with pytest.raises(ValueError, match=why):
            confirmations.chosen(pairs, [bad])
    results = tmp_path / "results"
    args = ["history", "confirm", "--mirror", str(tmp_path), "--results", str(results), "--classes",
            str(tmp_path / "none.json"), "--dry-run"]
    assert main([*args, "--pair", "bbbb..cccc"]) == 0
    shown = capsys.readouterr().out
    assert f"{B[:8]} -> {C[:8]}: 1 steps" in shown and f"{A[:8]} ->" not in shown
    assert main([*args, "--pair", "cccc..aaaa"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith("--pair cccc..aaaa: no pair of steps "
                                                                     "waits there")


def test_a_count_reproduces_only_exactly(tmp_path: Path) -> None:
    step = Step(StepKey(CPU, "mish", A, B), 1, 2, SUITE)
    again = tmp_path / "again"
    write_result(again, A, 10, {CPU: count_row(PROBES, [1, 3], "suite-ffffffffffffffff")})
    write_result(again, B, 11, {CPU: count_row(PROBES, [2, float("nan")], "suite-ffffffffffffffff")})
    found = read_dir(again)
    assert confirmations.measured(found, B, CPU, "elu") == "failed"
    assert confirmations.measured(found, C, CPU, "mish") is None  # not measured at all
    (done,) = judge(confirmations.pairs([step])[0], found, "box", "2026-12-07T00:00:00+00:00")
    assert (done.measured_before, done.measured_after, done.reproduced) == (1.0, 2.0, True)
    assert (done.machine, done.suite, done.recorded_before) == ("box", "suite-ffffffffffffffff", 1)
    assert confirmations.count_verdict(step, 1.0, 3.0) == (False, "exact count on both sides")
    assert not confirmations.count_verdict(step, None, 2.0)[0]
    events = Step(StepKey(EVENTS, "50, total", A, B), 1000.0, 1100.0, SUITE)
    assert confirmations.count_verdict(events, 1015.0, 1090.0)[0]  # within the track's 2 %
    assert not confirmations.count_verdict(events, 1000.0, 1000.0)[0]


def test_a_timing_reproduces_by_asv_compares_statistics(tmp_path: Path) -> None:
    step = Step(StepKey(TIME, "50", A, B), 1.0, 1.5, SUITE, timing=True)

    def remeasured(before: list[float], after: list[float]) -> tuple[bool, str]:
        root = tmp_path / f"again{len(list(tmp_path.iterdir()))}"
        write_result(root, A, 10, {TIME: timing_row(["50"], [before])})
        write_result(root, B, 11, {TIME: timing_row(["50"], [after])})
        found = read_dir(root)
        return confirmations.timing_verdict(step, confirmations.timed(found, A, TIME, "50"),
                                            confirmations.timed(found, B, TIME, "50"))

    ok, how = remeasured([1.0, 1.02, 0.98, 1.01, 0.99, 1.0, 1.0, 1.01],
                         [1.5, 1.52, 1.48, 1.51, 1.49, 1.5, 1.5, 1.5])
    assert ok and "8/8" in how and "Mann-Whitney" in how
    # 6 a side, fully separated: asv's exact two-sided p is 2/C(12, 6) = 0.00216, not < 0.002 (hence 8 rounds)
    assert not remeasured([1.0, 1.02, 0.98, 1.01, 0.99, 1.0], [1.5, 1.52, 1.48, 1.51, 1.49, 1.5])[0]
    # 50 % slower but the samples overlap: asv's U test does not call it different
    assert not remeasured([1.0, 1.6, 0.9, 1.55, 1.0, 1.5], [1.5, 1.0, 1.6, 0.95, 1.5, 1.55])[0]
    # different, but by less than the factor
    assert not remeasured([1.0, 1.01, 0.99, 1.0, 1.0, 1.01], [1.2, 1.21, 1.19, 1.2, 1.2, 1.21])[0]
    ok, how = remeasured([1.0, 1.01, 0.99, 1.0], [1.5, 1.52, 1.48, 1.5])  # 4 samples: p cannot reach 0.002
    assert not ok and "fewer than 6" in how


def test_the_file_has_one_reader_and_one_writer_and_a_corrupt_one_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = recorded(tmp_path / "results")
    store = confirmations.path_for(results)
    assert confirmations.read(store) == {}
    step = Step(StepKey(CPU, "mish", A, B), 1, 2, SUITE)
    first = confirmations.Confirmation(CPU, "mish", A, B, "2026-12-07T00:00:00+00:00", "box", SUITE, 1, 2,
                                       1.0, 2.0, True, "exact count on both sides")
    confirmations.write(store, [first])
    data = json.loads(store.read_text())
    assert data["schema"] == confirmations.SCHEMA and len(data["confirmations"]) == 1
    assert confirmations.lookup(confirmations.read(store), step) == first
    # a re-recorded side is a different step: the old confirmation does not answer it
    assert confirmations.lookup(confirmations.read(store), Step(step.key, 1, 3, SUITE)) is None
    assert confirmations.pending([step], confirmations.read(store)) == []  # resumes: never re-run
    # one stored before commands and files were kept is measured again (and replaced when stored)
    unkept = confirmations.Confirmation(**{**first.__dict__, "not_kept": confirmations.NOT_KEPT_V1})
    confirmations.write(store, [unkept])
    assert confirmations.pending([step], confirmations.read(store)) == [step]
    confirmations.write(store, [first])
    assert confirmations.pending([step], confirmations.read(store)) == []

    store.write_text('{"schema": "vkbench-confirmations/1", "confirmations": [{"benchmark": ')
    corrupt = store.read_text()
    with pytest.raises(ConfirmationsError, match=re.escape(str(store))):
        confirmations.read(store)
    with pytest.raises(ConfirmationsError):
        confirmations.write(store, [first])
    assert store.read_text() == corrupt  # never rewritten
    assert main(["changes", "--results", str(results), "--classes", str(tmp_path / "none.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(store) in err[0]


def test_a_runtime_confirmation_answers_its_own_machines_step_only(tmp_path: Path) -> None:
    """Each runtime machine has its own history: a step confirmed on the tracer-off machine is not the
    same step on the tracer-on one. A lowering step's files are merged over machines: its key has none,
    whichever machine re-measured it."""
    ladder, off, on = catalogue.PROBE_LADDER.name, "lavapipe-tracer-off", "lavapipe-tracer-on"
    store = confirmations.path_for(tmp_path)
    confirmed = confirmations.Confirmation(ladder, "probe/mish, native", A, B, "2026-12-07T00:00:00+00:00",
                                           off, SUITE, 3, 0, 3.0, 0.0, True, "exact count on both sides")
    lowering = confirmations.Confirmation(CPU, "mish", A, B, "2026-12-07T00:00:00+00:00", "box", SUITE,
                                          1, 2, 1.0, 2.0, True, "exact count on both sides")
    confirmations.write(store, [confirmed, lowering])
    stored = confirmations.read(store)
    mine, other = (Step(StepKey(ladder, "probe/mish, native", A, B, machine), 3, 0, SUITE)
                   for machine in (off, on))
    assert confirmations.lookup(stored, mine) == confirmed
    assert confirmations.lookup(stored, other) is None
    assert confirmations.pending([mine, other], stored) == [other]
    assert confirmations.lookup(stored, Step(StepKey(CPU, "mish", A, B), 1, 2, SUITE)) == lowering


def test_the_table_marks_confirmed_steps_and_drops_those_that_did_not_reproduce(tmp_path: Path) -> None:
    results = recorded(tmp_path / "results")
    date = "2026-12-07T00:00:00+00:00"
    stored = {c.key: c for c in [
        confirmations.Confirmation(CPU, "mish", A, B, date, "box", SUITE, 1, 2, 1.0, 2.0, True, "exact"),
        confirmations.Confirmation(CPU, "elu", B, C, date, "box", SUITE, 3, 2, 3.0, 3.0, False, "exact"),
        confirmations.Confirmation(TIME, "50", A, B, date, "box", SUITE, 1.0, 1.5, 1.0, 1.5, True, "U test")]}
    table = changes(read_dir(results), None, stored)
    assert [(c.benchmark, c.param, c.confirmed) for c in table.changes] == [(CPU, "mish", True),
                                                                              (TIME, "50", True)]
    assert [(c.param, c.confirmed) for c in table.dropped] == [("elu", False)]
    assert table.left_out == [] and table.steps_to_confirm() == []
    out = table.to_json()
    assert out["dropped"] == 1 and out["changes"][0]["confirmation"]["machine"] == "box"


def test_a_timing_step_stands_where_the_work_track_moves_with_it(tmp_path: Path) -> None:
    results = tmp_path / "results"
    fast, slow = [[1.0, 1.01, 0.99, 1.0]] * 2, [[1.5, 1.52, 1.49, 1.5]] * 2
    events = {A: [1000, 5000, 200, 210], B: [1100, 5010, 200, 210]}  # 50 blocks' propose_partitions +10 %

    def event_row(values: list[int]) -> list[object]:
        return [values, [["50", "100"], ["'propose_partitions'", "'total'"]], SUITE, 1, 1.0]

    write_result(results, A, 1, {TIME: timing_row(["50", "100"], fast), EVENTS: event_row(events[A])})
    write_result(results, B, 2, {TIME: timing_row(["50", "100"], slow), EVENTS: event_row(events[B])})
    table = changes(read_dir(results))
    kept = {(c.benchmark, c.param): c for c in table.changes}
    # the work count is a row of its own (10 % > 2 %); 5000 -> 5010 (0.2 %) is not a step
    assert set(kept) == {(EVENTS, "50, propose_partitions"), (TIME, "50")}
    assert kept[(TIME, "50")].note == "track_partition_events(50, propose_partitions) 1000 -> 1100"
    # at 100 blocks the work did not move: the timing is left out until re-measured
    assert [(s.param, s.why) for s in table.left_out] == [("100", TIMING_NOT_CONFIRMED)]
    pattern = re.search(r'-b "([^"]+)"', kept[(EVENTS, "50, propose_partitions")].repro)[1]
    assert re.search(pattern, f"{EVENTS}(50, 'propose_partitions')")  # asv's name: strings quoted
    assert not re.search(pattern, f"{EVENTS}(50, 'total')")


def test_every_stored_confirmation_agrees_with_its_verdict_and_its_evidence() -> None:
    """The committed confirmations: each verdict computed again from its stored values (and samples)
    is the stored one, and every one keeps its command and its files, which hold the values stored
    (those measured with asv also its exit status; a runtime pair runs no asv)."""
    from vkbench.paths import RESULTS_ROOT

    results = RESULTS_ROOT / "upstream"
    found = confirmations.audit(results)
    assert found.problems == []
    stored = confirmations.read(confirmations.path_for(results)).values()
    assert found.kept == len(stored) > 0 and found.not_kept == 0
    for c in stored:
        assert c.command and (results / c.files).is_dir() and c.not_kept is None
        assert (c.exit_code is None) == (results / c.files / confirmations.MEASURED).is_file()


def _kept_run(results: Path, measured_after: list[float]) -> confirmations.Confirmation:
    """A pair's run as ``history confirm`` keeps it: asv's files under confirmations/<id>/box/, and the
    confirmation judged from them with its command and exit status."""
    from vkbench.runs.confirm import keep

    run = tmp = results / "tmp-run"
    write_result(tmp, A, 10, {CPU: count_row(PROBES, [1, 3])})
    write_result(tmp, B, 11, {CPU: count_row(PROBES, measured_after)})
    (tmp / "box" / "machine.json").write_text('{"machine": "box", "version": 1}')
    date = "2026-12-08T09:30:00+00:00"
    name = confirmations.run_id(A, B, date, "count")
    assert name == "20261208T093000Z-aaaaaaaa-bbbbbbbb-count"
    kept = keep(run, confirmations.kept_folder(results, name))
    assert sorted(p.name for p in (kept / "box").iterdir()) == ["aaaaaaaa-virtualenv-py3.12.json",
                                                                "bbbbbbbb-virtualenv-py3.12.json"]
    step = Step(StepKey(CPU, "mish", A, B), 1, 2, SUITE)
    (done,) = judge(confirmations.pairs([step])[0], read_dir(tmp), "box", date,
                    ["python", "-m", "asv", "run", "-b", "x", "HASHFILE:h"], 0, f"confirmations/{name}")
    return done


def test_a_planted_disagreement_fails_the_audit(tmp_path: Path) -> None:
    """The audit fails a confirmation whose stored values disagree with its verdict, with its kept
    files, or whose evidence is missing; one stored before commands were kept passes only saying so."""
    from dataclasses import replace

    results = tmp_path / "results"
    good = _kept_run(results, [2, 3])
    store = confirmations.path_for(results)
    confirmations.write(store, [good])
    assert confirmations.audit(results).problems == [] and confirmations.audit(results).kept == 1
    assert json.loads(store.read_text())["confirmations"][0]["exit_code"] == 0

    def problems(planted: confirmations.Confirmation) -> list[str]:
        confirmations.write(store, [planted])
        return confirmations.audit(results).problems

    assert problems(replace(good, reproduced=False)) == [
        "ProbeCoverage.track_cpu_ops(mish) aaaaaaaa -> bbbbbbbb: stored as not reproduced, but its values "
        "are reproduced"]
    found = problems(replace(good, measured_after=3.0))  # a value neither its verdict nor its files hold
    assert any("stored as reproduced, but its values are not reproduced" in p for p in found)
    assert any("measured after 3.0 but the kept files hold 2.0" in p for p in found)
    kept_file = results / good.files / "box" / "bbbbbbbb-virtualenv-py3.12.json"
    original = kept_file.read_text()
    kept_file.write_text(original.replace("[2, 3]", "[5, 3]"))  # the kept file edited afterwards
    assert problems(good) == ["ProbeCoverage.track_cpu_ops(mish) aaaaaaaa -> bbbbbbbb: measured after 2.0 "
                              "but the kept files hold 5.0"]
    kept_file.write_text(original)
    assert any("asv's exit code is not stored" in p for p in problems(replace(good, exit_code=None)))
    assert any("kept files confirmations/nowhere are missing" in p
               for p in problems(replace(good, files="confirmations/nowhere")))
    assert any("no command and no reason why" in p
               for p in problems(replace(good, command=None, exit_code=None, files=None)))
    legacy = replace(good, command=None, exit_code=None, files=None, not_kept=confirmations.NOT_KEPT_V1)
    assert problems(legacy) == [] and confirmations.audit(results).not_kept == 1
    timing = confirmations.Confirmation(TIME, "50", A, B, "2026-12-08T09:30:00+00:00", "box", SUITE, 1.0, 1.5,
                                        1.0, 1.5, True, "U test", [1.0] * 8, [1.5, 1.51, 1.49, 1.5] * 2,
                                        not_kept=confirmations.NOT_KEPT_V1)
    assert problems(timing) == []
    assert any("measured before 1.2 is not the median of its 8 samples" in p
               for p in problems(replace(timing, measured_before=1.2)))


def test_a_version_1_file_is_read_as_kept_nothing_and_written_as_version_2(tmp_path: Path) -> None:
    store = confirmations.path_for(tmp_path)
    item = {"benchmark": CPU, "param": "mish", "previous": A, "commit": B,
            "date": "2026-12-06T14:23:04+00:00", "machine": "box", "suite": SUITE, "recorded_before": 1,
            "recorded_after": 2, "measured_before": 1.0, "measured_after": 2.0, "reproduced": True,
            "how": "exact count on both sides", "samples_before": [], "samples_after": []}
    store.write_text(json.dumps({"schema": "vkbench-confirmations/1", "confirmations": [item]}))
    (old,) = confirmations.read(store).values()
    assert (old.command, old.exit_code, old.files) == (None, None, None)
    assert old.not_kept == confirmations.NOT_KEPT_V1
    confirmations.write(store, [])
    data = json.loads(store.read_text())
    assert data["schema"] == confirmations.SCHEMA == "vkbench-confirmations/2"
    assert data["confirmations"] == [{**item, "command": None, "exit_code": None, "files": None,
                                      "not_kept": confirmations.NOT_KEPT_V1}]


def test_changes_json_shows_each_confirmations_evidence(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    results = recorded(tmp_path / "results")
    done = _kept_run(results, [2, 3])
    confirmations.write(confirmations.path_for(results), [done])
    none = str(tmp_path / "none.json")
    assert main(["changes", "--results", str(results), "--classes", none, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    row = next(c for c in out["changes"] if c["param"] == "mish")
    assert row["confirmation"]["command"] == done.command and row["confirmation"]["exit_code"] == 0
    assert row["confirmation"]["files"] == done.files and row["confirmation"]["not_kept"] is None
    step = next(s for e in out["events"] for s in e["steps"] if s["param"] == "mish")
    assert step["evidence"] == {"command": done.command, "exit_code": 0, "files": done.files,
                                "not_kept": None}
    assert main(["changes", "--results", str(results), "--classes", none]) == 0
    assert f"what they re-measured is kept in {done.files}" in capsys.readouterr().out


def test_confirm_measures_again_every_confirmation_stored_without_its_evidence() -> None:
    """The committed history: a step whose stored confirmation kept no command and files (``not_kept``),
    reproduced or dropped, is one ``history confirm`` measures again; one with its evidence is not."""
    from vkbench.cli.history import classes_path, explained
    from vkbench.paths import RESULTS_ROOT
    from vkbench.results.confirmations import lookup

    results = RESULTS_ROOT / "upstream"
    _, table = explained(results, classes_path("gate"))
    stored = confirmations.read(confirmations.path_for(results))
    steps = table.steps_to_confirm() + table.runtime_steps_to_confirm()
    pending = confirmations.pending(steps, stored)
    for step in steps:
        found = lookup(stored, step)
        assert (step in pending) == (found is None or bool(found.not_kept)), step
    unkept = [c for c in stored.values() if c.not_kept]
    assert len({c.key for c in unkept} - {s.key for s in pending}) == 0
