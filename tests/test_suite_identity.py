"""The suite's identity: a digest of the vkbench code each benchmark module's records run, as its asv
version; the measured list it covers; and the changes table never comparing two suites."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from vkbench.results import run_log
from vkbench.results.asv_files import read_dir
from vkbench.results.changes import (
    OLDER_SUITE,
    OLDER_SUITE_CHANGED,
    SAME,
    SUITE_CHANGED,
    TIMING_NOT_CONFIRMED,
    changes,
)
from vkbench.results.model import Provenance
from vkbench.site.changes_page import render
from vkbench.suite import catalogue, equivalence, identity, suite_inputs
from vkbench.suite.identity import PREFIX, ModuleInputs, SuiteInputs, digest, unlisted

ROOT = Path(__file__).resolve().parent.parent


def _trees(tmp_path: Path) -> dict[str, Path]:
    trees = {"vkbench": tmp_path / "vkbench", "benchmarks": tmp_path / "benchmarks"}
    for name, text in {"vkbench/core/lowering.py": "A = 1\n", "vkbench/site/page.py": "B = 1\n",
                       "benchmarks/bench_x.py": "C = 1\n", "vkbench/workloads/policies/act.py": ""}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return trees


def test_the_digest_changes_with_a_measured_file_and_not_with_an_unmeasured_one(tmp_path: Path) -> None:
    trees = _trees(tmp_path)
    files = ["vkbench/core/lowering.py", "benchmarks/bench_x.py"]
    first = digest(files, trees=trees)
    assert len(first) == 16 and digest(list(reversed(files)), trees=trees) == first  # order-free
    (tmp_path / "vkbench/site/page.py").write_text("B = 2\n")  # not in the list
    assert digest(files, trees=trees) == first
    (tmp_path / "vkbench/core/lowering.py").write_text("A = 2\n")  # in the list
    second = digest(files, trees=trees)
    assert second != first
    (tmp_path / "vkbench/core/lowering.py").unlink()  # a listed file gone is a change, not an error
    assert digest(files, trees=trees) not in (first, second)
    listed = digest(files, ["vkbench/workloads/policies"], trees=trees)  # a listed directory's names count
    (tmp_path / "vkbench/workloads/policies/__pycache__").mkdir()  # written by an import: no change
    assert digest(files, ["vkbench/workloads/policies"], trees=trees) == listed
    (tmp_path / "vkbench/workloads/policies/new.py").write_text("")
    assert digest(files, ["vkbench/workloads/policies"], trees=trees) != listed


def test_every_benchmark_s_asv_version_is_its_module_s_suite_digest() -> None:
    """asv's own discovery (what it stores in every result file) sees the digest as the version."""
    from asv_runner.discovery import get_benchmark_from_name

    stored = identity.stored()
    assert stored is not None and set(stored.modules) == set(suite_inputs.modules())  # every module measured
    for module in suite_inputs.modules():
        inputs = stored.modules[module]
        assert f"benchmarks/{module}.py" in inputs.files and "benchmarks/common.py" in inputs.files
        name = next(b.name for b in catalogue.ALL if b.module == module)
        found = get_benchmark_from_name(str(ROOT / "benchmarks"), name)
        now = PREFIX + digest(inputs.files, inputs.dirs)
        cls = name.split(".")[1]
        kept = equivalence.kept_version(module, cls, now)
        assert found.version == identity.suite_version(module, cls) == kept
        assert identity.carries_digest(found.version)


def test_the_measured_list_of_the_probes_holds_what_they_run_and_nothing_else() -> None:
    """One probe's record, measured in a child process as `vkbench history suite-inputs` does."""
    found = suite_inputs.measure(["bench_probes"], subsets={"bench_probes": {"case": ["linear_f32"]}})
    probes = found.modules["bench_probes"]
    assert probes.ran.startswith("8 points (0 skipped) of 8 benchmarks")  # with ExecuTorch's two counts
    assert {"benchmarks/bench_probes.py", "benchmarks/common.py", "vkbench/core/lowering.py",
            "vkbench/workloads/probes.py", "vkbench/suite/identity.py"} <= set(probes.files)
    assert not [f for f in probes.files if f.startswith(("vkbench/site/", "vkbench/cli/", "vkbench/runs/"))]
    assert "vkbench/suite/suite_inputs.py" not in probes.files  # the measuring code itself is forgotten
    assert "benchmarks/bench_policies.py" not in probes.files  # another module's imports do not leak in


def test_files_read_outside_the_list_are_noticed_stored_and_widened(
        tmp_path: Path, load_benchmark, monkeypatch: pytest.MonkeyPatch) -> None:
    from vkbench.results.recording import recording

    common = load_benchmark("common")
    lists = SuiteInputs({"bench_probes": ModuleInputs(["benchmarks/common.py"]),
                         "bench_partition": ModuleInputs(["vkbench/suite/identity.py"])})
    monkeypatch.setattr(identity, "stored", lambda: lists)
    monkeypatch.setattr(run_log, "_NOTED_INPUTS", set())
    # a fork since bench_probes' own list: what it imported afterwards is its records'; and a file
    # no list names was imported at suite import
    identity_py = "vkbench/suite/identity.py"
    assert unlisted("bench_probes", {"a", "b", identity_py}, {"b", identity_py}) == {"a", "b", identity_py}
    assert unlisted("bench_partition", {"vkbench/suite/identity.py"}, set()) == set()
    results = tmp_path / "results"
    with recording(results, Provenance(tier="gate")) as run:
        monkeypatch.setenv("VKBENCH_FAILURE_LOG", run.env["VKBENCH_FAILURE_LOG"])
        monkeypatch.setenv("ASV_COMMIT", "c" * 40)
        monkeypatch.setenv("ASV_ENV_NAME", "virtualenv-py3.12")
        common.note_inputs("bench_probes")  # this process imported much more than the list says
        _asv(run.results / "box" / "c.json", "c" * 40, 1, {"mish": 1}, "v")
    [record] = read_dir(results).files
    read = record.sidecar.suite_reads["bench_probes"]
    assert "vkbench/suite/identity.py" in read and "benchmarks/common.py" not in read
    wider, added = lists.widen(record.sidecar.suite_reads, identity.tree_files(identity.roots()))
    assert "vkbench/suite/identity.py" in added["bench_probes"] and "bench_partition" not in added
    assert wider.widen(record.sidecar.suite_reads, identity.tree_files(identity.roots()))[1] == {}
    assert "vkbench/no/such.py" not in wider.widen({"bench_probes": {"vkbench/no/such.py"}},
                                                   identity.tree_files(identity.roots()))[0].listed()


def _asv(path: Path, commit: str, date: int, cpu_ops: dict[str, float], version: str | None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    params = [[repr(name) for name in cpu_ops]]
    path.write_text(json.dumps({
        "commit_hash": commit, "env_name": "virtualenv-py3.12", "date": date, "version": 2,
        "result_columns": ["result", "params", "version"],
        "results": {catalogue.PROBE_CPU_OPS.name: [list(cpu_ops.values()), params, version]}}))
    return path


def test_changes_never_compare_two_suites_and_count_what_they_leave_out(tmp_path: Path) -> None:
    from vkbench.results import sidecar

    box = tmp_path / "results" / "box"
    old, digest_a, digest_b = "0" * 64, PREFIX + "a" * 16, PREFIX + "b" * 16
    _asv(box / "1.json", "1" * 40, 1, {"mish": 3, "elu": 1}, old)  # older suite, no provenance
    _asv(box / "2.json", "2" * 40, 2, {"mish": 2, "elu": 1}, old)  # older suite, no provenance
    _asv(box / "3.json", "3" * 40, 3, {"mish": 2, "elu": 4}, old)  # older suite, stamped
    sidecar.merge(box / "3.json", patterns={catalogue.PROBE_CPU_OPS.name: ""})
    _asv(box / "4.json", "4" * 40, 4, {"mish": 5, "elu": 4}, digest_a)  # the suite's digest
    _asv(box / "5.json", "5" * 40, 5, {"mish": 5, "elu": 2}, digest_a)
    _asv(box / "6.json", "6" * 40, 6, {"mish": 1, "elu": 2}, digest_b)  # another suite
    _asv(box / "7.json", "7" * 40, 7, {"mish": 1, "elu": math.nan}, digest_b)  # told by ProbeFailure only
    table = changes(read_dir(tmp_path / "results"))
    rows = {(c.param, c.commit[0]): c.suite for c in table.changes}
    assert rows == {("elu", "5"): SAME}  # 4 -> 2 under one digest: the one upstream change
    assert [c.param for c in table.upstream] == ["elu"] and table.older == []
    left = {(s.param, s.commit[0]): s.why for s in table.left_out}
    assert left == {("mish", "2"): OLDER_SUITE,  # 3 -> 2 between two older records: drawn, never compared
                    ("elu", "3"): OLDER_SUITE_CHANGED,  # 1 -> 4: the provenance tells the suite changed
                    ("mish", "4"): SUITE_CHANGED,  # 2 -> 5: source hash against digest
                    ("mish", "6"): SUITE_CHANGED}  # 5 -> 1: two digests
    assert table.left_out_counts() == {SUITE_CHANGED: 2, OLDER_SUITE_CHANGED: 1, OLDER_SUITE: 1,
                                       TIMING_NOT_CONFIRMED: 0}
    data = table.to_json()
    assert data["left_out"] == {"suite changed": 2, "older suite changed": 1, "older suite": 1,
                                "timing not confirmed": 0}
    assert len(data["left_out_steps"]) == 4
    assert [c["suite"] for c in data["changes"]] == [SAME]
    from vkbench.results.events import explain

    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", render(explain(read_dir(tmp_path / "results")), None)))
    assert "1 events (0 regressing), 1 steps : 1 recorded by one suite on both sides" in text
    assert "4 left out : 2 with differing suite versions, 1 older records" in text
    assert "1 between two records of an older suite" in text
    assert "elu 4 → 2 44444444..55555555 (other) not yet" in text  # one suite: waits for its confirmation
    assert "mish 3 → 2" not in text  # an older suite's step is counted, never shown as a change
