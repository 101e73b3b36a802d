"""What ``vkbench gate`` measures: the compared selection, and the narrower one it measures again."""

from __future__ import annotations

import re

from vkbench.results import verdict
from vkbench.results.confirmations import asv_name
from vkbench.runs import gate
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
