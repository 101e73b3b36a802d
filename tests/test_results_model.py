"""The one reader of asv's result files, the sidecars beside them, and what a recording run stamps.

Files are written here in asv 0.6's own layout (``result_columns`` and one
row per benchmark) into temp dirs; nothing outside them is touched.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

from vkbench.results import sidecar
from vkbench.results.asv_files import ResultFileError, read_dir, read_file, write_file
from vkbench.results.model import Failure, Provenance
from vkbench.results.recording import recording, stamp_inferred_tiers
from vkbench.results.run_log import RunLog
from vkbench.suite import catalogue

#: Every lowering of this module partitions with the pattern graphs built once (same partitions).
pytestmark = pytest.mark.usefixtures("pattern_graphs_built_once")

COLUMNS = ["result", "params", "version", "started_at", "duration", "stats_ci_99_a", "stats_ci_99_b",
           "stats_q_25", "stats_q_75", "stats_number", "stats_repeat", "samples"]
PROBES = ["'mish'", "'mha_cross'"]


def asv_file(path: Path, commit: str, results: dict[str, list], env: str = "virtualenv-py3.12") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"commit_hash": commit, "env_name": env, "date": 1_700_000_000_000,
                                "params": {"python": "3.12"}, "python": "3.12", "requirements": {},
                                "env_vars": {}, "result_columns": COLUMNS, "results": results,
                                "durations": {"<build>": 7.5}, "version": 2}))
    return path


def probe_rows(cpu_ops: list[float | None], failed: list[int], started_at: int = 1) -> dict[str, list]:
    """The two probe rows; ``started_at`` is asv's (ms since the epoch): 1 is long before any run."""
    return {catalogue.PROBE_CPU_OPS.name: [cpu_ops, [PROBES], "v1", started_at, 2.0],
            catalogue.PROBE_FAILED.name: [failed, [PROBES], "v2", started_at, 1.0]}


def now_ms() -> int:
    return int(time.time() * 1000)


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    asv_file(root / "box" / "aaaaaaaa-virtualenv-py3.12.json", "a" * 40, probe_rows([1, 0], [0, 0]))
    asv_file(root / "box" / "bbbbbbbb-virtualenv-py3.12.json", "b" * 40, probe_rows([0, math.nan], [0, 1]))
    (root / "benchmarks.json").write_text(json.dumps({"version": 2}))
    return root


def test_points_unquote_parameters_and_keep_failures_as_none(results: Path) -> None:
    found = read_dir(results)
    assert found.problems == [] and found.commits() == ["a" * 40, "b" * 40]
    newer = next(f for f in found.files if f.commit == "b" * 40)
    assert newer.values(catalogue.PROBE_CPU_OPS.name) == {("mish",): 0.0, ("mha_cross",): None}
    assert [p.failed for p in newer.points(catalogue.PROBE_CPU_OPS.name)] == [False, True]
    assert newer.values("bench_elsewhere.NoSuch.track_x") == {}


def test_bad_files_are_one_line_each_and_the_rest_is_read(results: Path) -> None:
    box = results / "box"
    good = (box / "bbbbbbbb-virtualenv-py3.12.json").read_text()
    (box / "cccccccc-truncated.json").write_text(good[: len(good) // 2])
    (box / "dddddddd-no-columns.json").write_text(json.dumps({"commit_hash": "d" * 40, "results": {}}))
    (box / "eeeeeeee-list.json").write_text("[]")
    before = {p.name: p.read_bytes() for p in box.iterdir()}
    found = read_dir(results)
    assert sorted(f.commit[0] for f in found.files) == ["a", "b"]
    problems = {p.path.name: str(p) for p in found.problems}
    assert sorted(problems) == ["cccccccc-truncated.json", "dddddddd-no-columns.json", "eeeeeeee-list.json"]
    for name, line in problems.items():
        assert "\n" not in line and line.startswith(str(box / name) + ": ")
    assert "not valid JSON" in problems["cccccccc-truncated.json"]
    assert "no result_columns" in problems["dddddddd-no-columns.json"]
    assert {p.name: p.read_bytes() for p in box.iterdir()} == before  # nothing rewritten
    with pytest.raises(ResultFileError, match="cccccccc-truncated.json: not valid JSON"):
        read_file(box / "cccccccc-truncated.json")


def test_write_file_round_trips_asv_layout(results: Path, tmp_path: Path) -> None:
    source = results / "box" / "bbbbbbbb-virtualenv-py3.12.json"
    copy = write_file(read_file(source), tmp_path / "copy.json")
    original, written = json.loads(source.read_text()), json.loads(copy.read_text())
    assert written.keys() == original.keys()
    for key in original:
        if key != "results":
            assert written[key] == original[key], key
    for name, row in original["results"].items():
        assert written["results"][name][:len(row)] == [None if isinstance(v, float) and math.isnan(v) else v
                                                       for v in row] or written["results"][name] == row


def test_sidecar_merge_keeps_earlier_entries_and_move_carries_them(results: Path) -> None:
    path = results / "box" / "bbbbbbbb-virtualenv-py3.12.json"
    sidecar.merge(path, Provenance(tier="gate"), [(catalogue.PROBE_CPU_OPS.name, ("mha_cross",),
                                                   Failure("preprocess", "flatc: cannot parse"))])
    sidecar.merge(path, Provenance(launch_method="forkserver"))
    record = read_file(path)
    assert record.tier == "gate" and record.sidecar.provenance.launch_method == "forkserver"
    assert record.failure(catalogue.PROBE_CPU_OPS.name, ("mha_cross",)) == Failure("preprocess",
                                                                                  "flatc: cannot parse")
    assert record.points(catalogue.PROBE_CPU_OPS.name)[1].failure.stage == "preprocess"
    target = results / "box" / "ffffffff-virtualenv-py3.12.json"
    path.rename(target)
    sidecar.move(path, target)
    assert read_file(target).tier == "gate" and not sidecar.path_for(path).exists()
    assert not any(p.suffix == ".json" and p.stem.endswith(".vkbench") for p in results.rglob("*"))


def test_a_recording_run_stamps_the_files_it_wrote(results: Path, load_benchmark, monkeypatch) -> None:
    common = load_benchmark("common")
    untouched = results / "box" / "aaaaaaaa-virtualenv-py3.12.json"
    with recording(results, Provenance(tier="gate", launch_method="forkserver")) as run:
        monkeypatch.setenv("VKBENCH_FAILURE_LOG", run.env["VKBENCH_FAILURE_LOG"])
        monkeypatch.setenv("ASV_COMMIT", "c" * 40)
        monkeypatch.setenv("ASV_ENV_NAME", "virtualenv-py3.12")
        common.note_failure("probe", "mha_cross", "preprocess",
                            "flatc: schema.json:1: cannot parse value starting with: -\nsecond line")
        common.note_failure("policy", "act/model", "export", "never stored: no bench_policies row")
        common.note_cpu("probe", "mish", {"cpu_ops": {"aten.softplus.default": 1},
                                          "reasons_by_op": {"aten.softplus.default": {"no kernel": 1}}})
        asv_file(run.results / "box" / "cccccccc-virtualenv-py3.12.json", "c" * 40,
                 probe_rows([0, math.nan], [0, 1], now_ms()))  # asv writes the run's own folder
    written = results / "box" / "cccccccc-virtualenv-py3.12.json"
    assert not Path(run.env["VKBENCH_FAILURE_LOG"]).exists() and not run.scratch.exists()  # for the run only
    found = {f.commit[0]: f for f in read_dir(results).files}
    assert found["a"].tier is None and not sidecar.path_for(untouched).exists()
    stamped = found["c"]
    assert stamped.tier == "gate" and stamped.sidecar.provenance.tier_source == "recorded"
    why = Failure("preprocess", "flatc: schema.json:1: cannot parse value starting with: -")
    assert stamped.sidecar.failures == {(catalogue.PROBE_CPU_OPS.name, ("mha_cross",)): why,
                                        (catalogue.PROBE_FAILED.name, ("mha_cross",)): why}
    assert stamped.cpu(catalogue.PROBE_CPU_OPS.name, "mish") == {
        "aten.softplus.default": {"nodes": 1, "reasons": {"no kernel": 1}}}
    assert read_file(written).cpu(catalogue.PROBE_CPU_OPS.name, "mish") == stamped.cpu(
        catalogue.PROBE_CPU_OPS.name, "mish")  # the sidecar round trip


def test_a_lowered_probe_logs_its_cpu_ops_with_the_partitioners_reasons(tmp_path: Path, load_benchmark,
                                                                         monkeypatch) -> None:
    """The suite's probe record (a real lowering of ``mish``) reaches the log as ops and reasons."""
    from vkbench.results import run_log

    common = load_benchmark("common")
    monkeypatch.setattr(run_log, "_NOTED_INPUTS", set())  # the modules it notes stay this test's
    log = tmp_path / "failures.jsonl"
    monkeypatch.setenv("VKBENCH_FAILURE_LOG", str(log))
    monkeypatch.setenv("ASV_COMMIT", "c" * 40)
    monkeypatch.setenv("ASV_ENV_NAME", "virtualenv-py3.12")
    record = common.lower_probe("mish")
    cpu = RunLog.read(log).cpu[("c" * 40, "virtualenv-py3.12")][("bench_probes", "mish")]
    assert cpu and {op: ops["nodes"] for op, ops in cpu.items()} == record["cpu_ops"]
    assert all(ops["reasons"] == record["reasons_by_op"][op] for op, ops in cpu.items())


def test_run_log_lines_that_are_not_whole_entries_are_skipped(tmp_path: Path) -> None:
    log = tmp_path / "failures.jsonl"
    log.write_text('{"commit": "c", "env": "e", "kind": "probe", "workload": "elu", "stage": "export", '
                   '"error": "boom"}\n{"commit": "c", "env"\nnot json\n'
                   '{"commit": "c", "env": "e", "kind": "probe", "workload": "gelu"}\n'
                   '{"commit": "c", "env": "e", "kind": "inputs", "files": "not a list"}\n')
    assert RunLog.read(log).failures == {("c", "e"): {("probe", "elu"): Failure("export", "boom")}}
    assert RunLog.read(log).inputs == {}


def test_the_run_log_is_written_as_typed_entries_and_read_once_into_one_run_log(tmp_path: Path,
                                                                               monkeypatch) -> None:
    """Each kind of entry the benchmark side writes comes back through the one reader, tagged with the
    commit and environment asv ran; a result file takes its own commit's and environment's entries and
    those written without a commit (an installed release)."""
    from vkbench.results import run_log

    log = tmp_path / "run.jsonl"
    monkeypatch.setenv(run_log.LOG_SETTING, str(log))
    monkeypatch.setenv("ASV_ENV_NAME", "env")
    for commit, entries in (("a" * 40, [run_log.FailureEntry("probe", "elu", "export", "boom"),
                                        run_log.InputsEntry(("executorch/exir/__init__.py",)),
                                        run_log.SuiteEntry("bench_probes", ("vkbench/new.py",)),
                                        run_log.CpuEntry("policy", "tdmpc/pi", {"aten.mul": {"nodes": 2}})]),
                            ("b" * 40, [run_log.FailureEntry("probe", "gelu", "lower", "other")]),
                            ("", [run_log.InputsEntry(("executorch/exir/pass_base.py",))])):
        monkeypatch.setenv("ASV_COMMIT", commit)
        for entry in entries:
            run_log.write(entry)
    found = RunLog.read(log)
    mine = found.for_record("a" * 40, "env")
    assert mine.failures == {("probe", "elu"): Failure("export", "boom")}
    assert mine.inputs == {"executorch/exir/__init__.py", "executorch/exir/pass_base.py"}
    assert mine.suite_reads == {"bench_probes": {"vkbench/new.py"}}
    assert mine.cpu == {("bench_policies", "tdmpc/pi"): {"aten.mul": {"nodes": 2}}}
    assert found.for_record("b" * 40, "env").failures == {("probe", "gelu"): Failure("lower", "other")}
    assert found.for_record("a" * 40, "another env") == run_log.RecordLog()


def test_files_recorded_before_tiers_were_stored_get_the_tier_they_hold(tmp_path: Path) -> None:
    root = tmp_path / "results"
    meta = {"params": [PROBES], "param_names": ["case"], "type": "track", "version": "v1", "unit": "nodes"}
    (root / "box").mkdir(parents=True)
    (root / "benchmarks.json").write_text(json.dumps({catalogue.PROBE_CPU_OPS.name: meta, "version": 2}))
    path = asv_file(root / "box" / "aaaaaaaa-virtualenv-py3.12.json", "a" * 40, probe_rows([1, 0], [0, 0]))
    # the gate: a larger tier is a file's only when it holds more of the suite than the smaller one
    assert stamp_inferred_tiers(root) == [(path, "gate")]
    assert read_file(path).sidecar.provenance.tier_source == "inferred"
    assert stamp_inferred_tiers(root) == []  # a stored tier is left alone


def test_publish_gets_every_readable_file_and_the_bad_one_stays(results: Path, tmp_path: Path) -> None:
    from vkbench.results.asv_files import without_unreadable

    assert without_unreadable(results, tmp_path / "scratch") == (results, [])
    bad = results / "box" / "cccccccc-truncated.json"
    bad.write_text('{"commit_hash": "c')
    readable, problems = without_unreadable(results, tmp_path / "scratch")
    assert [p.path for p in problems] == [bad] and bad.read_text() == '{"commit_hash": "c'
    linked = sorted(p.relative_to(readable).as_posix() for p in readable.rglob("*") if p.is_file())
    assert linked == ["benchmarks.json", "box/aaaaaaaa-virtualenv-py3.12.json",
                      "box/bbbbbbbb-virtualenv-py3.12.json"]
    assert read_dir(readable).problems == [] and len(read_dir(readable).files) == 2


def test_cost_reports_every_other_commit_of_a_directory_with_a_truncated_file(results: Path) -> None:
    import subprocess
    import sys

    good = (results / "box" / "bbbbbbbb-virtualenv-py3.12.json").read_text()
    (results / "box" / "cccccccc-truncated.json").write_text(good[: len(good) // 2])
    done = subprocess.run([sys.executable, "-m", "vkbench", "cost", "--results", str(results), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cccccccc-truncated.json: not valid JSON" in lines[0]
    assert "Traceback" not in done.stderr


def test_combinations_a_run_did_not_select_are_not_points(results: Path) -> None:
    """asv writes NaN for the parameters a ``-b`` pattern left out of a row new to the file:
    not failures, not points."""
    path = results / "box" / "cccccccc-virtualenv-py3.12.json"
    with recording(results, Provenance(bench_pattern=r"track_cpu_ops\('mish'\)")) as run:
        asv_file(run.results / "box" / path.name, "c" * 40, probe_rows([0, math.nan], [0, 0], now_ms()))
    record = read_file(path)
    assert record.sidecar.patterns[catalogue.PROBE_CPU_OPS.name] == r"track_cpu_ops\('mish'\)"
    assert record.values(catalogue.PROBE_CPU_OPS.name) == {("mish",): 0.0}  # mha_cross was not run


def test_a_narrower_rerun_keeps_what_the_earlier_runs_recorded(results: Path) -> None:
    """asv keeps the unselected points of a row whose version is unchanged, so an earlier run's
    failure stays a failure; the stored pattern becomes the union of the runs'."""
    path = results / "box" / "bbbbbbbb-virtualenv-py3.12.json"
    before = read_file(path).values(catalogue.PROBE_CPU_OPS.name)
    assert before == {("mish",): 0.0, ("mha_cross",): None}  # no pattern stored: NaN reads as failed

    def rerun(pattern: str, version: str = "v1") -> None:
        with recording(results, Provenance(bench_pattern=pattern)) as run:
            own = run.results / "box" / path.name  # the seeded copy asv loads and writes
            data = json.loads(own.read_text())
            row = data["results"][catalogue.PROBE_CPU_OPS.name]
            row[2], row[3] = version, now_ms()  # this run wrote the row
            own.write_text(json.dumps(data))

    rerun(r"track_cpu_ops\('mish'\)")
    record = read_file(path)
    assert record.sidecar.patterns == {catalogue.PROBE_CPU_OPS.name: ""}  # written whole before
    assert record.values(catalogue.PROBE_CPU_OPS.name) == before
    # a row this run did not write keeps all its points
    assert record.values(catalogue.PROBE_FAILED.name) == {("mish",): 0.0, ("mha_cross",): 1.0}

    rerun("A", version="v9")  # a new version: asv dropped the old row, the new pattern alone
    rerun("B", version="v9")
    assert read_file(path).sidecar.patterns[catalogue.PROBE_CPU_OPS.name] == "(?:A)|(?:B)"


def test_a_file_copied_in_during_a_run_is_not_stamped_with_it(results: Path) -> None:
    """Only rows asv started after the run began are the run's (not a file copied in meanwhile)."""
    path = results / "box" / "dddddddd-virtualenv-py3.12.json"
    with recording(results, Provenance(tier="gate", bench_pattern="other")):
        asv_file(path, "d" * 40, probe_rows([1, 0], [0, 0]))  # recorded long ago, elsewhere
    assert not sidecar.path_for(path).exists() and read_file(path).tier is None


def test_a_file_another_run_recorded_meanwhile_keeps_its_own_sidecar(results: Path) -> None:
    """A re-recording lane copies a fresh result and its sidecar in while another run records
    other commits: its rows started after that run began, but the sidecar is the lane's."""
    path = results / "box" / "eeeeeeee-virtualenv-py3.12.json"
    with recording(results, Provenance(tier="gate", bench_pattern="VLAPolicyLowering")):
        asv_file(path, "e" * 40, probe_rows([1, 0], [0, 0], now_ms()))
        sidecar.merge(path, Provenance(tier="gate", bench_pattern="lane's pattern"))
    stored = read_file(path).sidecar
    assert stored.provenance.bench_pattern == "lane's pattern"
    assert "VLAPolicyLowering" not in json.dumps(stored.patterns)


def test_a_stored_reason_reads_the_same_whatever_unbacked_symbols_torch_names():
    """relower_unbacked's error lists a set of symbols whose names and order change from run to run."""
    from vkbench.results.failure_key import normalize_error

    one = normalize_error("to_edge", "to_edge: PendingUnbackedSymbolNotFound: symbols {u13, u9} not in "
                                     "outputs")
    two = normalize_error("to_edge", "PendingUnbackedSymbolNotFound: symbols {u8, u20, u11} not in outputs")
    assert one == two == "PendingUnbackedSymbolNotFound: symbols {u…} not in outputs"


def test_the_failure_key_masks_addresses_and_is_idempotent():
    """The dashboard listed one preprocess failure once per commit: each run prints other addresses."""
    from vkbench.results.failure_key import block_key, normalize_error

    def mode(at: str, other: str) -> str:
        return (f"AssertionError: fake mode (<torch._subclasses.fake_tensor.FakeTensorMode object at {at}>) "
                f"from fake tensor input 0 doesn't match mode (<...FakeTensorMode object at {other}>)")

    one = normalize_error("preprocess", mode("0x7f2eb4afc5c0", "0x7f2eaf76fad0"))
    two = normalize_error("preprocess", "preprocess: " + mode("0x7f15d8f618b0", "0x7f15d89198b0") + "\nmore")
    assert one == two and "object at 0x…>" in one and "0x7f" not in one
    raw = ("to_edge: E: Eq(u2, 1) {u3, u1} at 0xff in /tmp/tmpab_c/x.py, "
           "/home/me/.venv/lib/python3.12/site-packages/torch/a.py:12")
    key = normalize_error("to_edge", raw)
    assert key == "E: Eq(u…, 1) {u…} at 0x… in <tmp>/x.py, site-packages/torch/a.py:12"
    assert normalize_error("to_edge", key) == key  # stored keys read back unchanged
    assert block_key(raw) == ("to_edge", key)


def test_a_stored_reason_is_read_through_the_failure_key(results: Path) -> None:
    """A sidecar recorded before addresses were masked reads like a new one; the file stays as stored."""
    path = results / "box" / "bbbbbbbb-virtualenv-py3.12.json"
    sidecar.merge(path, failures=[(catalogue.PROBE_CPU_OPS.name, ("mha_cross",),
                                   Failure("preprocess", "AssertionError: mode at 0x7f2eb4afc5c0"))])
    stored = sidecar.path_for(path).read_text()
    assert "0x7f2eb4afc5c0" in stored
    assert read_file(path).failure(catalogue.PROBE_CPU_OPS.name, ("mha_cross",)) == Failure(
        "preprocess", "AssertionError: mode at 0x…")
    assert sidecar.path_for(path).read_text() == stored


@pytest.mark.parametrize(("text", "what"), [
    ("{x", "not JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
    ("[1]", "not a sidecar (top level is list)"),
    ('{"vkbench_sidecar": 7}', "not a version-1 or 2 sidecar (vkbench_sidecar is 7)"),
    ('{"vkbench_sidecar": 2, "runs": [{"benchmarks": ["b"], "provenance": 3}]}',
     "malformed (TypeError: a run's provenance is int, not an object or 'unknown')"),
    ('{"vkbench_sidecar": 1, "provenance": [1]}', "malformed (AttributeError: 'list' object has no attribute "
                                                   "'items')"),
])
def test_a_corrupt_sidecar_is_one_line_and_the_result_file_is_still_read(results: Path, capsys, text: str,
                                                                          what: str) -> None:
    path = results / "box" / "bbbbbbbb-virtualenv-py3.12.json"
    sidecar.path_for(path).write_text(text)
    first, again = read_dir(results), read_dir(results)
    err = capsys.readouterr().err.splitlines()
    assert err == [f"vkbench: {sidecar.path_for(path)}: {what}; read without its sidecar"]
    for found in (first, again):
        record = next(f for f in found.files if f.path == path)
        assert record.tier is None and record.points(catalogue.PROBE_CPU_OPS.name)  # read, no sidecar
        assert not found.problems
