"""Partitioner cost as the graph grows: ``VulkanPartitioner.partition`` on Blocks(n).

The edge program is built in ``setup`` (outside the timed region) and copied
per call, because ``partition`` tags nodes in place. 400 blocks take minutes
on 2 cores, so each size is sampled once per process.
"""

from __future__ import annotations

import copy

from .common import BLOCK_SIZES, blocks_edge_program, quiet, require_vkbench

try:
    from vkbench.lowering import timed_partition
except Exception:  # noqa: BLE001 - require_vkbench() reports why in setup
    timed_partition = None  # type: ignore[assignment]


class PartitionScaling:
    params = [BLOCK_SIZES]
    param_names = ["blocks"]
    timeout = 900
    number = 1
    repeat = 1
    processes = 1
    warmup_time = 0.0

    def setup(self, blocks: int) -> None:
        require_vkbench()
        quiet()
        self.program = copy.deepcopy(blocks_edge_program(blocks))

    def time_partition(self, blocks: int) -> None:
        timed_partition(self.program)

    def track_partitions(self, blocks: int) -> int:
        """Vulkan partitions found; more means more CPU<->GPU transitions."""
        partitions, _ = timed_partition(self.program)
        return partitions

    track_partitions.unit = "partitions"

    def peakmem_partition(self, blocks: int) -> None:
        timed_partition(self.program)


class PartitionPhases:
    """Seconds per phase of one partition call, so a regression names its owner.

    ``propose_partitions`` is torch.fx; ``fusable_patterns`` and
    ``is_node_supported`` are ExecuTorch's Vulkan partitioner.
    """

    params = [BLOCK_SIZES, ["propose_partitions", "fusable_patterns", "is_node_supported"]]
    param_names = ["blocks", "phase"]
    timeout = 1800
    unit = "seconds"

    def setup_cache(self) -> dict[int, dict[str, float]]:
        require_vkbench()
        quiet()
        return {n: timed_partition(copy.deepcopy(blocks_edge_program(n)))[1] for n in BLOCK_SIZES}

    def track_phase_seconds(self, cache: dict[int, dict[str, float]], blocks: int, phase: str) -> float:
        return cache[blocks][phase]

    track_phase_seconds.unit = "seconds"
