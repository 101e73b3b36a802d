"""The verdict's pure part (``vkbench.results.verdict``): which stepped points fail, and the report."""

from __future__ import annotations

from vkbench.results import verdict
from vkbench.suite import catalogue


def _work(blocks: int, **events: float) -> verdict.Points:
    return verdict.as_points(blocks, {"pattern_graphs": 0, **events})


def test_a_phase_fails_only_past_the_factor_and_the_per_block_floor() -> None:
    base = _work(50, propose_partitions=700_000, fusable_patterns=20_000, is_node_supported=80_000,
                 total=800_000)
    tiny = _work(50, propose_partitions=700_000, fusable_patterns=21_000, is_node_supported=80_000,
                 total=801_000)
    assert not verdict.failing(verdict.work_rows(base, tiny))  # +1,000 events: 5 % of the phase, 20 a block
    bigger = _work(50, propose_partitions=700_000, fusable_patterns=20_000, is_node_supported=90_000,
                   total=810_000)
    rows = verdict.failing(verdict.work_rows(base, bigger))
    assert [(r.kind, r.phase) for r in rows] == [("regression", "is_node_supported")]  # total: 1.0125x
    assert rows[0].before == 80_000 and rows[0].after == 90_000 and rows[0].ratio == 1.125
    down = _work(50, propose_partitions=600_000, fusable_patterns=20_000, is_node_supported=80_000,
                 total=700_000)
    assert {(r.kind, r.phase) for r in verdict.failing(verdict.work_rows(base, down))} == {
        ("unexpected improvement", "propose_partitions"), ("unexpected improvement", "total")}


def test_pattern_graphs_step_as_a_notice_and_are_taken_out_of_fusable_and_total() -> None:
    same = {"propose_partitions": 62_000, "is_node_supported": 35_000}
    base = verdict.as_points(20, {"pattern_graphs": 2_700_000, "fusable_patterns": 2_708_000, **same,
                                  "total": 2_805_000})
    head = verdict.as_points(20, {"pattern_graphs": 2_800_000, "fusable_patterns": 2_808_000, **same,
                                  "total": 2_905_000})
    rows = verdict.work_rows(base, head)
    assert [(r.kind, r.phase) for r in rows] == [("notice", "pattern_graphs")]


def test_a_changed_partitioning_fails_with_torch_fx_work_beside_it() -> None:
    rows = verdict.decision_rows({"50": 51.0}, {"50": 26.0}, _work(50, propose_partitions=700_000),
                                 _work(50, propose_partitions=500_000))
    assert [(r.kind, r.phase, r.before, r.after) for r in rows] == [("decision changed", "propose_partitions",
                                                                     51.0, 26.0)]
    assert "700,000 -> 500,000" in rows[0].note


def test_the_report_puts_confirmed_failures_first_and_says_how_to_reproduce() -> None:
    work = catalogue.PARTITION_EVENTS.name
    rows = [verdict.Row("notice", work, "50, 'pattern_graphs'", "pattern_graphs", 1.0, 2.0),
            verdict.Row("regression", work, "50, 'is_node_supported'", "is_node_supported", 80.0, 90.0,
                        confirmed=True),
            verdict.Row("regression", work, "100, 'total'", "total", 10.0, 20.0, confirmed=False)]
    text = verdict.report("base", "head", rows, 12, "vkbench gate base head --mirror M", ["asv run ..."])
    lines = text.splitlines()
    assert lines[2] == ("❌ 1 confirmed regression (or unexpected moves) · 12 points compared · "
                        "3 stepped")
    table = [line for line in lines if line.startswith("| ")][2:]  # after the header and its rule
    assert "is_node_supported" in table[0] and "reproduced on both sides" in table[0]
    assert "1.1250x" in table[0]
    assert "did not reproduce: dropped" in table[1] and "⚠️" in table[1]
    assert "vkbench gate base head --mirror M" in text
    clean = verdict.report("base", "head", [], 12, "repro", [])
    assert "✅ no confirmed regression" in clean and "| " not in clean
