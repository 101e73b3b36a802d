"""The suite's records: each workload processed once per commit, shared by the benchmarks that read it."""

from __future__ import annotations

import json

import pytest


def test_a_shared_record_is_made_once(load_benchmark, tmp_path):
    common = load_benchmark("common")
    calls = []

    def make():
        calls.append(1)
        return {"value": len(calls)}

    assert common.shared_record(str(tmp_path), "act/model.full", make) == {"value": 1}
    assert common.shared_record(str(tmp_path), "act/model.full", make) == {"value": 1}
    assert calls == [1] and common.record_path(str(tmp_path), "act/model.full").is_file()


def test_partition_counts_reuse_the_full_lowering_record(load_benchmark, tmp_path):
    policies = load_benchmark("bench_policies")
    common = load_benchmark("common")
    full = {"status": "lowered", "seconds": 9.0, "coverage": {"nodes_cpu": 4, "vulkan_programs": 3,
                                                             "cpu_percent": 1.0}}
    common.record_path(str(tmp_path), "act/model.full").write_text(json.dumps(full))
    bench = policies.PolicyPartition()
    bench.setup(str(tmp_path), "act/model")
    assert bench.track_cpu_ops(str(tmp_path), "act/model") == 4
    assert not common.record_path(str(tmp_path), "act/model.partition").exists()  # nothing partitioned again


def test_blocked_entries_skip_with_their_reason_but_still_report_work(load_benchmark, tmp_path):
    policies = load_benchmark("bench_policies")
    with pytest.raises(NotImplementedError, match="no/such is blocked at import: .*not a policy entry"):
        policies.PolicyPartition().setup(str(tmp_path), "no/such")
    work = policies.RecordCostPolicyPartition()
    work.setup(str(tmp_path), "no/such")  # the work track never skips
    assert work.track_work_seconds(str(tmp_path), "no/such") == 0.0


def test_time_partition_times_the_program_its_record_was_made_from(load_benchmark, tmp_path):
    partition = load_benchmark("bench_partition")
    directory = str(tmp_path)
    timing = partition.PartitionScaling()
    timing.setup(directory, 50)  # first user: records Blocks(50) and keeps its edge program
    assert timing.repeat == partition.PartitionScaling.SAMPLES[50]
    timing.time_partition(directory, 50)
    record = partition.PartitionScalingRecord()
    record.setup(directory, 50)
    assert record.track_partitions(directory, 50) == 51
    assert record.track_work_seconds(directory, 50) >= record.track_to_edge_seconds(directory, 50) > 0
    phases = partition.PartitionScalingPhases()
    phases.setup(directory, 50, "propose_partitions")
    assert phases.track_phase_seconds(directory, 50, "propose_partitions") > 0
    assert [p.name for p in tmp_path.iterdir()] == ["blocks-50.json"]


def test_counted_work_is_read_from_one_record_for_the_gate_sizes(load_benchmark, tmp_path):
    """50 and 100 blocks are counted by one child into one record; a failed count fails every phase."""
    partition = load_benchmark("bench_partition")
    common = load_benchmark("common")
    events = {"propose_partitions": 5, "fusable_patterns": 3, "is_node_supported": 2, "other": 1, "total": 11}
    stored = {"50": {"events": events}, "100": {"events": {**events, "total": 40}}}
    common.record_path(str(tmp_path), "work-50-100").write_text(json.dumps(stored))
    work = partition.PartitionWork()
    work.setup(str(tmp_path), 100, "total")  # read, not counted again: no child runs
    assert work.track_partition_events(str(tmp_path), 100, "total") == 40
    work.setup(str(tmp_path), 50, "is_node_supported")
    assert work.track_partition_events(str(tmp_path), 50, "is_node_supported") == 2
    failed = {"200": {"error": "counting failed"}}
    common.record_path(str(tmp_path), "work-200").write_text(json.dumps(failed))
    with pytest.raises(RuntimeError, match="counting failed"):
        work.setup(str(tmp_path), 200, "total")
