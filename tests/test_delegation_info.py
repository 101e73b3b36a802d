"""ExecuTorch's own delegation counts, recorded beside vkbench's (issue 30, item 8).

``executorch.devtools.backend_debug.get_delegation_info`` is what ExecuTorch's backend tester
reports; it counts ``getitem`` nodes where vkbench does not, so its share differs (act/model:
99.7 % by vkbench, 99.3 % by ExecuTorch). :func:`vkbench.core.lowering.lower` stores its two numbers
in the record it already makes; the tests check them against a *direct* call on the program
that lowering produced (caught on its way out of ``to_edge_transform_and_lower`` by
:func:`direct_delegation_info`). Every probe is checked in ``tests/test_probes.py``, whose
partition-only lowering of each probe serves that check and the partition-only one (one lowering
of each probe in CI, not two); the fast policy entries inside ``tests/test_policies.py``'s
``fast_rows`` fixture, which lowers them once for the whole session; the one fast entry that fixture
leaves out (a rewrite, seconds to lower) is lowered here.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from delegation_counts import direct_delegation_info

from vkbench.core import lowering
from vkbench.core.compat import Missing
from vkbench.suite import catalogue

#: Every lowering of this module partitions with the pattern graphs built once (same partitions).
pytestmark = pytest.mark.usefixtures("pattern_graphs_built_once")

pytest.importorskip("executorch.devtools.backend_debug")


def test_fast_rewrite_entry_carries_executorchs_counts() -> None:
    """The fast entry ``fast_rows`` does not lower (a rewrite of gaussian_actor/deterministic)."""
    policies = pytest.importorskip("vkbench.workloads.policies")
    name = "gaussian_actor/deterministic_without_chunk"
    assert name in catalogue.FAST_ENTRIES
    logging.getLogger().setLevel(logging.WARNING)
    with direct_delegation_info() as seen:
        row = policies.survey_entry(policies.ENTRIES[name], partition_only=True)
    assert row.status == "lowered", row
    assert (row.coverage["et_delegated_nodes"], row.coverage["et_non_delegated_nodes"]) == seen[-1]


def test_counts_are_none_without_get_delegation_info(monkeypatch) -> None:
    """At an ExecuTorch without ``backend_debug`` (or its function) the record says None, not 0."""
    monkeypatch.setattr(lowering, "_backend_debug", lambda: Missing("executorch.devtools.backend_debug",
                                                                   ImportError("no such module")))
    assert lowering.et_delegation_counts(None) == (None, None)  # type: ignore[arg-type]
    monkeypatch.setattr(lowering, "_backend_debug", lambda: object())  # imports, lacks the function
    assert lowering.et_delegation_counts(None) == (None, None)  # type: ignore[arg-type]
    assert lowering.Coverage().to_json()["et_delegated_nodes"] is None


# -- the benchmarks read the record and skip where it has no ExecuTorch counts --------------------
def test_probe_tracks_return_the_records_counts_and_skip_without_them(load_benchmark) -> None:
    probes = load_benchmark("bench_probes")
    bench = probes.ProbeCoverage()
    cache = {"mish": {"et_delegated_nodes": 5, "et_non_delegated_nodes": 3},
             "elu": {"et_delegated_nodes": None, "et_non_delegated_nodes": None}, "var": {}}
    assert bench.track_et_delegated_nodes(cache, "mish") == 5
    assert bench.track_et_non_delegated_nodes(cache, "mish") == 3
    for case in ("elu", "var"):  # recorded at an old ExecuTorch / by an older vkbench
        for track in (bench.track_et_delegated_nodes, bench.track_et_non_delegated_nodes):
            with pytest.raises(NotImplementedError, match="get_delegation_info"):
                track(cache, case)


@pytest.mark.parametrize("cls, full", [("PolicyPartition", False), ("VLAPolicyLowering", True)])
def test_policy_tracks_return_the_records_counts_and_skip_without_them(load_benchmark, tmp_path,
                                                                       cls: str, full: bool) -> None:
    policies = load_benchmark("bench_policies")
    common = load_benchmark("common")
    directory = str(tmp_path)
    suffix = "full" if full else "partition"
    for entry, coverage in (("act/model", {"et_delegated_nodes": 1856, "et_non_delegated_nodes": 13}),
                            ("tdmpc/pi", {"et_delegated_nodes": None, "et_non_delegated_nodes": None})):
        row = {"status": "lowered", "seconds": 1.0, "coverage": {"nodes_cpu": 5, **coverage}}
        common.record_path(directory, f"{entry}.{suffix}").write_text(json.dumps(row))
    bench = getattr(policies, cls)()
    bench.setup(directory, "act/model")
    assert bench.track_et_delegated_nodes(directory, "act/model") == 1856
    assert bench.track_et_non_delegated_nodes(directory, "act/model") == 13
    bench.setup(directory, "tdmpc/pi")
    with pytest.raises(NotImplementedError, match="get_delegation_info"):
        bench.track_et_delegated_nodes(directory, "tdmpc/pi")


# -- the site shows ExecuTorch's share only where the record has it -------------------------------
def _survey_row(entry: str, et: tuple[int, int] | None) -> dict[str, Any]:
    coverage: dict[str, Any] = {"nodes_total": 1812, "nodes_delegated": 1807, "nodes_cpu": 5,
                                "cpu_nodes": [{"node": "n", "op": "aten.x", "reasons": ["why"]}] * 5}
    if et is not None:
        coverage.update(et_delegated_nodes=et[0], et_non_delegated_nodes=et[1])
    return {"entry": entry, "policy": entry.split("/")[0], "status": "lowered", "coverage": coverage}


def test_dashboard_share_shows_executorchs_only_where_recorded() -> None:
    pytest.importorskip("matplotlib")
    from vkbench.site.dashboard.dashboard_page import share_definitions
    from vkbench.site.dashboard.plots import plot_share
    from vkbench.site.dashboard.views import _entry_share

    new, old = _entry_share(_survey_row("act/model", (1856, 13))), _entry_share(_survey_row("act/old", None))
    assert new.et_share == pytest.approx(1856 / 1869) and old.et_share is None
    svg = plot_share([new, old])
    assert "ExecuTorch: 99.3% of 1,869" in svg and svg.count("ExecuTorch") == 1 and "None" not in svg
    assert "get_delegation_info" in share_definitions([new, old])
    assert "get_delegation_info" not in share_definitions([old]) and "vkbench" in share_definitions([old])


def test_coverage_page_rows_carry_both_counts_only_where_recorded() -> None:
    from vkbench.site.coverage_page import render_page
    from vkbench.site.coverage_sets import policy_rows

    rows = policy_rows([_survey_row("act/model", (1856, 13)), _survey_row("act/old", None)])
    new = next(r for r in rows if r["name"] == "act/model")
    old = next(r for r in rows if r["name"] == "act/old")
    assert (new["et_delegated_nodes"], new["et_non_delegated_nodes"], new["nodes_total"]) == (1856, 13, 1812)
    assert "et_delegated_nodes" not in old and old["nodes_cpu"] == 5
    page = render_page([{"executorch": {}, "rows": rows}])
    assert "get_delegation_info" in page and "CPU share" in page


def test_the_headline_tile_gives_executorchs_share_only_when_every_lowered_row_has_it() -> None:
    from vkbench.site.dashboard.dashboard_page import tiles
    from vkbench.site.dashboard.views import Survey, Upstream, _entry_share

    def tile_text(*rows: dict[str, Any]) -> str:
        survey = Survey("f.json", "1.5.1", "m", [_entry_share(row) for row in rows], [])
        return tiles(survey, [], Upstream([], [], {}), [])

    both = tile_text(_survey_row("act/model", (1856, 13)), _survey_row("act/copy", (1856, 13)))
    assert "of 3,624 policy nodes on Vulkan" in both and "99.3%" in both  # vkbench's: 3,614 of 3,624
    assert "of 3,738 by ExecuTorch&#x27;s get_delegation_info" in both and "99.3%</b>" in both
    one_missing = tile_text(_survey_row("act/model", (1856, 13)), _survey_row("act/old", None))
    assert "get_delegation_info" not in one_missing and "policy nodes on Vulkan" in one_missing


def test_the_policies_docs_list_both_shares_and_leave_executorchs_empty_where_not_recorded() -> None:
    from vkbench.runs.doc_sections import SHARE_DEFINITIONS, shares_markdown

    blocked = {"entry": "x/blocked", "policy": "x", "status": "blocked", "coverage": None}
    text = shares_markdown([_survey_row("act/model", (1856, 13)), _survey_row("act/old", None), blocked])
    rows = [line for line in text.splitlines() if line.startswith("| act/")]
    lines = {line.split(" | ")[0].strip("| "): line for line in rows}
    assert lines["act/model"] == "| act/model | 1,807 / 1,812 | 99.7 % | 1,856 / 1,869 | 99.3 % |"
    assert lines["act/old"] == "| act/old | 1,807 / 1,812 | 99.7 % |  |  |"
    assert "x/blocked" not in text and SHARE_DEFINITIONS in text and "get_delegation_info" in text


def test_a_coverage_set_takes_its_policy_rows_from_the_saved_survey_of_its_executorch(tmp_path: Path,
                                                                                      capsys) -> None:
    """``vkbench site coverage --refresh --survey FILE``: the probes lowered again (ExecuTorch's counts
    beside vkbench's), the policy rows from the survey (both counts where it has them); a survey of
    another ExecuTorch, or an unreadable one, is one line and exit 2 before anything is lowered."""
    from vkbench.cli import main
    from vkbench.core.versions import public_version
    from vkbench.site.coverage_sets import SurveyMismatch, cache_key, collect, identity

    version = public_version(str(identity()["version"]))
    survey = tmp_path / f"executorch-{version}-box.json"
    survey.write_text(json.dumps({"rows": [_survey_row("act/model", (1856, 13)),
                                           {"entry": "x/y", "status": "blocked", "stage": "export"}]}))
    data = collect(tmp_path / "sets", survey=survey, probes=["linear_f32"])
    probe = next(r for r in data["rows"] if r["kind"] == "probe")
    # vkbench's 2 nodes, none on the CPU; get_delegation_info counts the linear's 2 and 1 non-delegated
    assert [probe[k] for k in ("name", "nodes_total", "nodes_cpu", "et_delegated_nodes",
                               "et_non_delegated_nodes")] == ["linear_f32", 2, 0, 2, 1]
    act = next(r for r in data["rows"] if r["name"] == "act/model")
    assert (act["et_delegated_nodes"], act["et_non_delegated_nodes"], act["nodes_cpu"]) == (1856, 13, 5)
    assert any(r["name"] == "x/y" and r["reason"].startswith("BLOCKED at export") for r in data["rows"])
    assert data["policies_from"] == survey.as_posix()
    assert json.loads((tmp_path / "sets" / f"{cache_key(identity())}.json").read_text()) == data
    other = tmp_path / "executorch-0.0.1-box.json"
    other.write_text(survey.read_text())
    with pytest.raises(SurveyMismatch, match="a survey of executorch 0.0.1, not of the importable"):
        collect(tmp_path / "sets", survey=other)
    for bad in (other, tmp_path / "executorch-missing-box.json"):
        assert main(["site", "coverage", "--survey", str(bad)]) == 2
        assert str(bad) in capsys.readouterr().err.strip().splitlines()[-1]
    assert main(["site", "coverage", "--survey", str(survey), "--policies"]) == 2


def test_a_coverage_set_surveyed_afresh_names_no_saved_survey(tmp_path: Path, monkeypatch) -> None:
    """``--policies`` surveys the fast entries here (stubbed: hours of lowering) and the set then names no
    ``policies_from``: the survey function and the saved survey's path are two things."""
    from vkbench.site.coverage_sets import collect
    from vkbench.workloads import policies

    monkeypatch.setattr(policies, "fast_entries", lambda: ["act/model"])
    monkeypatch.setattr(policies, "survey", lambda entries: [_survey_row(e, (1856, 13)) for e in entries])
    data = collect(tmp_path / "sets", policies=True, probes=["linear_f32"])
    act = next(r for r in data["rows"] if r["name"] == "act/model")
    assert (act["kind"], act["et_delegated_nodes"], act["et_non_delegated_nodes"]) == ("policy", 1856, 13)
    assert "policies_from" not in data
