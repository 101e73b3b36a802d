"""``vkbench suite torch-compare``: the comparison of two sides' records, on small hand-made documents.

Nothing is lowered or downloaded here: the sides are dicts shaped like ``vkbench probe --json``'s probes and
``vkbench policies --json``'s rows, and the runner's one subprocess call is replaced where a test needs
its arguments. Files go to ``tmp_path`` only.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from vkbench.paths import ROOT
from vkbench.runs import torch_compare
from vkbench.runs.torch_compare import TorchCompareError, compare, measured, report
from vkbench.suite.catalogue import FAST_ENTRIES


def _coverage(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "vulkan_programs": 1, "nodes_total": 12, "nodes_delegated": 10, "nodes_cpu": 2,
        "cpu_ops": {"aten.bucketize.Tensor": 2},
        "cpu_nodes": [{"node": "bucketize", "op": "aten.bucketize.Tensor", "reasons": ["no Vulkan op"]},
                      {"node": "bucketize_1", "op": "aten.bucketize.Tensor", "reasons": ["no Vulkan op"]}],
        "seconds": {"to_edge": 0.4, "partition": 0.2}, "partition_phases": {"propose_partitions": 0.01},
        "preprocess_calls": 1, "peak_rss_mb": 900.0, "added_rss_mb": 12.0, "program_bytes": 4096,
        "partition_only": False, "op_types_total": 4, "delegated_ops": {"aten.add.Tensor": 10},
        "et_delegated_nodes": 11, "et_non_delegated_nodes": 3, "cpu_percent": 16.667,
        "cpu_op_type_percent": 25.0, "reasons_by_op": {"aten.bucketize.Tensor": {"no Vulkan op": 2}},
    }
    data.update(over)
    return data


def _probe(name: str, **over: Any) -> dict[str, Any]:
    return {"probe": name, "shows": "a hand-made probe", **_coverage(**over), "work_seconds": 1.5}


def _entry(name: str, **over: Any) -> dict[str, Any]:
    return {"entry": name, "policy": name.split("/")[0], "status": "lowered", "stage": "", "error_type": "",
            "error": "", "coverage": _coverage(**over), "reduced": "", "notes": "", "slow": False,
            "seconds": 20.0, "allowed_on_cpu": [], "default_blocker": "", "blocked_with_allowed": ""}


def _blocked(name: str, error: str) -> dict[str, Any]:
    return {"entry": name, "policy": name.split("/")[0], "status": "blocked", "stage": "export",
            "error_type": "RuntimeError", "error": error, "coverage": None, "reduced": "", "notes": "",
            "slow": False, "seconds": 3.0, "allowed_on_cpu": [], "default_blocker": "",
            "blocked_with_allowed": ""}


def _side(prefix: str, torch: str, probes: list[dict[str, Any]], entries: list[dict[str, Any]] | None,
          ) -> dict[str, Any]:
    site = f"{prefix}/lib/python3.12/site-packages"
    return {"environment": {"interpreter": f"{prefix}/bin/python", "prefix": prefix, "python": "3.12.1",
                            "torch": torch, "torch_file": f"{site}/torch/__init__.py", "executorch": "1.5.1"},
            "seconds": {"probes": 100.0}, "probes": probes, "entries": entries}


def _pair() -> tuple[dict[str, Any], dict[str, Any]]:
    """Two sides that record the same things, with everything that may differ without mattering differing."""
    a = _side("/a/.venv", "2.11.0", [_probe("bucketize"), _probe("div_0d", nodes_cpu=0, cpu_ops={})],
              [_entry("tdmpc/q"), _blocked("act/model", "guard at 0x7f3a1b2c3d40 in /a/.venv/lib/python3.12/"
                                                        "site-packages/torch/_export/x.py")])
    b = _side("/b/.venv-torch213", "2.13.0", copy.deepcopy(a["probes"]), copy.deepcopy(a["entries"]))
    b["entries"][1]["error"] = ("guard at 0x55d0c0ffee10 in /b/.venv-torch213/lib/python3.12/site-packages/"
                                "torch/_export/x.py")
    for record in b["probes"]:  # time and memory are not compared
        record["work_seconds"] = 9.0
        record["peak_rss_mb"] = 1.0
        record["seconds"] = {"to_edge": 3.0}
    b["entries"][0]["seconds"] = 99.0
    b["entries"][0]["coverage"]["partition_phases"] = {"propose_partitions": 5.0}
    return a, b


def test_equal_sides_compare_equal_despite_times_addresses_and_install_paths() -> None:
    a, b = _pair()
    result = compare(a, b)
    assert result.differences == []
    assert result.totals == {"probe": (2, 2), "entry": (2, 2)}
    assert result.exit_code == 0
    assert result.summary() == "probes 2/2 equal, entries 2/2 equal"
    text = report(result)
    assert "torch 2.11.0" in text and "torch 2.13.0" in text and text.endswith(result.summary())


def test_the_order_of_a_set_in_a_reason_is_not_a_difference_but_its_items_are() -> None:
    """A ``torch.dtype`` hashes by its address: ExecuTorch's ``{torch.float32, torch.float16}`` moves."""
    def where(reason: str) -> dict[str, Any]:
        return _entry("vqbet/rollout", reasons_by_op={"aten.where.self": {reason: 1}},
                      cpu_nodes=[{"node": "where_8", "op": "aten.where.self", "reasons": [reason]}])

    a, b = _pair()
    a["entries"].append(where("input[1] dtype torch.int64 not in {torch.float32, torch.float16}"))
    b["entries"].append(where("input[1] dtype torch.int64 not in {torch.float16, torch.float32}"))
    assert compare(a, b).differences == []
    b["entries"][-1] = where("input[1] dtype torch.int64 not in {torch.float16, torch.bfloat16}")
    assert {d.field for d in compare(a, b).differences} == {"reasons_by_op", "cpu_nodes"}


def test_an_overlay_naming_its_bases_files_and_a_temporary_folder_is_not_a_difference() -> None:
    """Side B, an overlay over A's environment, runs A's executorch: a failure text names A's site dir
    (its ``flatc``) and a ``mkdtemp`` folder of its own. Neither is a difference; the message itself is."""
    import tempfile

    temp = tempfile.gettempdir()

    def failing(folder: str) -> dict[str, Any]:
        flatc = "/a/.venv/lib/python3.12/site-packages/executorch/data/bin/flatc"
        return _probe("mha_cross", failed_stage="preprocess",
                      error=f"CalledProcessError: ['{flatc}', '{temp}/{folder}/schema.json'] returned 1: "
                            "cannot parse value starting with: -")

    a, b = _pair()
    a["probes"].append(failing("tmpkj6r_s9h"))
    b["probes"].append(failing("tmpwbya1lae"))
    assert compare(a, b).differences == []
    b["probes"][-1]["error"] = b["probes"][-1]["error"].replace("starting with: -", "starting with: +")
    assert {d.field for d in compare(a, b).differences} == {"error"}


def test_a_count_that_differs_fails_and_is_named() -> None:
    a, b = _pair()
    b["probes"][0]["nodes_cpu"] = 3
    b["probes"][0]["reasons_by_op"] = {"aten.bucketize.Tensor": {"no Vulkan op": 3}}
    b["entries"][0]["coverage"]["et_delegated_nodes"] = 12
    result = compare(a, b)
    assert result.exit_code == 1
    found = {(d.kind, d.name, d.field): (d.a, d.b) for d in result.differences}
    assert found == {("probe", "bucketize", "nodes_cpu"): (2, 3),
                     ("probe", "bucketize", "reasons_by_op"): ({"aten.bucketize.Tensor": {"no Vulkan op": 2}},
                                                              {"aten.bucketize.Tensor": {"no Vulkan op": 3}}),
                     ("entry", "tdmpc/q", "et_delegated_nodes"): (11, 12)}
    assert result.totals == {"probe": (1, 2), "entry": (1, 2)}
    assert result.summary() == "probes 1/2 equal, entries 1/2 equal; counts differ in bucketize, tdmpc/q"
    table = report(result)
    assert "A (torch 2.11.0)" in table and "et_delegated_nodes" in table and "nodes_cpu" in table


def test_failure_text_and_presence_are_compared() -> None:
    a, b = _pair()
    b["entries"][1]["error"] = "another guard"
    del b["probes"][1]
    result = compare(a, b)
    fields = {(d.name, d.field) for d in result.differences}
    assert fields == {("act/model", "error"), ("div_0d", "present")}
    assert result.exit_code == 1
    assert result.totals["probe"] == (1, 2)


def test_program_bytes_alone_are_reported_but_do_not_fail() -> None:
    a, b = _pair()
    b["entries"][0]["coverage"]["program_bytes"] = 4096 + 128
    result = compare(a, b)
    assert result.exit_code == 0
    assert [(d.name, d.field, d.counts) for d in result.differences] == [("tdmpc/q", "program_bytes", False)]
    assert result.summary() == "probes 2/2 equal, entries 2/2 equal (program bytes differ: tdmpc/q +128)"
    assert "no (bytes)" in report(result)


def test_probes_only_sides_leave_the_entries_out_of_the_summary() -> None:
    a, b = _pair()
    a["entries"] = b["entries"] = None
    assert compare(a, b).summary() == "probes 2/2 equal"


def test_measured_reads_kept_sides_and_refuses_a_folder_without_them(tmp_path: Path) -> None:
    a, b = _pair()
    b["probes"][1]["vulkan_programs"] = 2
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    result = measured(tmp_path)
    assert [(d.name, d.field, d.a, d.b) for d in result.differences] == [("div_0d", "vulkan_programs", 1, 2)]
    assert result.to_json()["exit"] == 1
    with pytest.raises(TorchCompareError, match="no side documents"):
        measured(tmp_path / "empty")


def test_a_side_runs_the_probes_then_the_standard_tiers_fast_entries(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def fake(python: str, arguments: list[str], log: Path) -> dict[str, Any]:
        calls.append([python, *arguments])
        if arguments[0] == "probe":
            return {"probes": [_probe("bucketize")]}
        return {"rows": [_entry("act/model")]}

    monkeypatch.setattr(torch_compare, "run_vkbench", fake)
    side = torch_compare.measure_side("/x/python", {"torch": "2.13.0"}, tmp_path, "b")
    assert calls[0] == ["/x/python", "probe", "--json"]
    assert calls[1][:3] == ["/x/python", "policies", "--json"]
    assert calls[1][3::2] == ["--policy"] * len(FAST_ENTRIES) and calls[1][4::2] == FAST_ENTRIES
    assert len(FAST_ENTRIES) == 14
    assert [r["entry"] for r in side["entries"]] == ["act/model"]
    assert set(side["seconds"]) == {"probes", "entries"}
    calls.clear()
    assert "entries" not in torch_compare.measure_side("/x/python", {"torch": "2.13.0"}, tmp_path, "b",
                                                       probes_only=True)
    assert len(calls) == 1


def test_children_run_this_checkout_with_one_hash_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    env = torch_compare._child_env()
    assert env["PYTHONPATH"].split(os.pathsep) == [str(ROOT), "/elsewhere"]
    assert env["PYTHONHASHSEED"] == torch_compare.HASH_SEED


def test_the_document_is_found_after_anything_a_library_printed() -> None:
    assert torch_compare._document('loading weights\n{\n "probes": []\n}\n') == {"probes": []}
    with pytest.raises(ValueError):
        torch_compare._document("no json here")


def test_an_interpreter_that_is_not_there_or_cannot_run_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(TorchCompareError, match=r"^no interpreter at .*/missing/python$"):
        torch_compare.environment(str(tmp_path / "missing" / "python"))
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named torch' >&2\nexit 1\n")
    with pytest.raises(TorchCompareError, match="is not an executable interpreter"):
        torch_compare.environment(str(broken))
    broken.chmod(0o755)
    with pytest.raises(TorchCompareError) as error:
        torch_compare.environment(str(broken))
    assert str(error.value) == (f"{broken} cannot import torch, executorch and vkbench: "
                                "ModuleNotFoundError: No module named torch")
    with pytest.raises(TorchCompareError, match="exactly two interpreters"):
        torch_compare.run([str(broken)])
    with pytest.raises(TorchCompareError, match="no base interpreter"):
        torch_compare.make_overlay(tmp_path / "overlay", "2.13.0", "0.28.0", str(tmp_path / "missing"))
    assert not (tmp_path / "overlay").exists()


def test_the_command_exits_2_1_0_with_one_line_for_bad_input(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from vkbench.cli import main

    missing = tmp_path / "nope" / "python"
    assert main(["suite", "torch-compare", "--python", str(missing), "--python", sys.executable]) == 2
    err = capsys.readouterr().err
    assert err == f"vkbench suite: error: no interpreter at {missing}\n"
    assert main(["suite", "torch-compare", "--make-overlay", str(tmp_path / "o"), "--torch", "2.13.0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1

    a, b = _pair()
    b["entries"][0]["coverage"]["program_bytes"] += 128
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    assert main(["suite", "torch-compare", "--measured", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "probes 2/2 equal, entries 2/2 equal (program bytes differ: tdmpc/q +128)"
    b["probes"][0]["nodes_total"] = 13
    (tmp_path / "b.json").write_text(json.dumps(b))
    assert main(["suite", "torch-compare", "--measured", str(tmp_path), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["exit"] == 1 and document["totals"]["probe"] == {"equal": 1, "compared": 2}
    assert {"kind": "probe", "name": "bucketize", "field": "nodes_total", "a": 12, "b": 13,
            "counts": True} in document["differences"]
