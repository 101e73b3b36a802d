"""vkbench.workloads.fusion: torch.fx's propose_partitions without horizontal fusion (a what-if patch)."""

from __future__ import annotations

import contextlib
import copy

import pytest
import torch

from vkbench.core.lowering import lower, timed_partition
from vkbench.workloads import fusion
from vkbench.workloads.graphs import Fn
from vkbench.workloads.scaling import blocks_edge_program

#: Every lowering of this module partitions with the pattern graphs built once (same partitions).
pytestmark = pytest.mark.usefixtures("pattern_graphs_built_once")

Partitioner = fusion._partitioner_class()
BLOCKS = 8


@pytest.fixture(scope="module")
def blocks_program():
    return blocks_edge_program(BLOCKS)


def _partitions(program, patched: bool):
    """``(count, node sets)`` of one :func:`timed_partition` of a fresh copy, patched or not."""
    with fusion.without_horizontal_fusion() if patched else contextlib.nullcontext():
        with fusion.proposed_partitions() as calls:
            count, _ = timed_partition(copy.deepcopy(program))
    (partitions,) = calls
    return count, partitions


def test_blocks_keep_their_partitions(blocks_program):
    count, partitions = _partitions(blocks_program, patched=False)
    patched_count, patched_partitions = _partitions(blocks_program, patched=True)
    assert count == patched_count == BLOCKS + 1
    assert fusion.same_partitions(partitions, patched_partitions)


def test_independent_branches_are_no_longer_fused():
    """The patch is live: two unrelated supported ops share a partition only with horizontal fusion."""
    module = Fn(lambda x, y: (torch.sigmoid(x), torch.tanh(y)))
    inputs = (torch.randn(1, 8), torch.randn(1, 8))
    found = {}
    for patched in (False, True):
        with fusion.without_horizontal_fusion() if patched else contextlib.nullcontext():
            with fusion.proposed_partitions() as calls:
                coverage, _ = lower(module, inputs, to_executorch=False, partition_only=True)
        found[patched] = (calls[-1], coverage)
    (fused, fused_coverage), (split, split_coverage) = found[False], found[True]
    assert len(fused) == 1 and len(split) == 2
    assert set().union(*fused) == set().union(*split)  # the same nodes go to Vulkan
    assert fused_coverage.nodes_cpu == split_coverage.nodes_cpu == 0
    assert (fused_coverage.vulkan_programs, split_coverage.vulkan_programs) == (1, 2)


def test_torch_is_restored_on_exit_and_on_error():
    original = vars(Partitioner)["propose_partitions"]
    with fusion.without_horizontal_fusion():
        patched = vars(Partitioner)["propose_partitions"]
        assert patched is not original
        assert patched.__code__.co_filename.startswith("<vkbench.workloads.fusion")
    assert vars(Partitioner)["propose_partitions"] is original
    with pytest.raises(KeyError), fusion.without_horizontal_fusion():
        raise KeyError("inside")
    assert vars(Partitioner)["propose_partitions"] is original
    with fusion.proposed_partitions():
        assert vars(Partitioner)["propose_partitions"] is not original
    assert vars(Partitioner)["propose_partitions"] is original


def test_refuses_a_torch_it_was_not_checked_against(monkeypatch):
    original = vars(Partitioner)["propose_partitions"]
    assert fusion.unpatchable_reason() is None
    monkeypatch.setattr(fusion, "SOURCE_SHA256", "0" * 64)
    with pytest.raises(fusion.TorchMismatch, match="differs from torch 2.11.0's"):
        with fusion.without_horizontal_fusion():
            pytest.fail("patched a mismatched torch")
    assert vars(Partitioner)["propose_partitions"] is original
    assert "differs" in fusion.unpatchable_reason()


def test_refuses_to_patch_over_another_patch():
    original = vars(Partitioner)["propose_partitions"]
    with fusion.proposed_partitions():  # a wrapper is not torch's function: its source is not the one hashed
        with pytest.raises(fusion.TorchMismatch, match="not torch's own function"):
            fusion.patched_propose_partitions()
    assert vars(Partitioner)["propose_partitions"] is original


@pytest.mark.slow
def test_benchmark_times_and_records_the_patched_partition(load_benchmark, tmp_path):
    partition = load_benchmark("bench_partition")
    directory = str(tmp_path)
    timing = partition.PartitionWithoutHorizontalFusion()
    timing.setup(directory, BLOCKS)  # records Blocks(8) both ways, keeps the edge program
    timing.time_partition(directory, BLOCKS)
    record = partition.PartitionWithoutHorizontalFusionRecord()
    record.setup(directory, BLOCKS)
    assert record.track_partitions(directory, BLOCKS) == BLOCKS + 1
    baseline = partition.PartitionScalingRecord()
    baseline.setup(directory, BLOCKS)
    assert baseline.track_partitions(directory, BLOCKS) == BLOCKS + 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"blocks-{BLOCKS}-without-horizontal-fusion.json", f"blocks-{BLOCKS}.json"
    ]
    assert vars(Partitioner)["propose_partitions"].__code__.co_filename == fusion._fx.__file__


def test_benchmark_skips_where_torch_cannot_be_patched(load_benchmark, tmp_path, monkeypatch):
    partition = load_benchmark("bench_partition")
    monkeypatch.setattr(fusion, "SOURCE_SHA256", "0" * 64)
    with pytest.raises(NotImplementedError, match="cannot patch"):
        partition.PartitionWithoutHorizontalFusion().setup(str(tmp_path), BLOCKS)
    assert list(tmp_path.iterdir()) == []
