"""How the Vulkan partitioner's time grows with graph size (``Blocks(n)``).

The seed saw 2.6 s at 50 blocks and 95 s at 400: super-linear growth that
comes from torch.fx's ``CapabilityBasedPartitioner.propose_partitions``. We
time ``VulkanPartitioner.partition`` alone on a prebuilt edge program (as the
seed did), split by phase, and fit ``seconds ~ n**k`` across sizes.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from vkbench.core.compat import require, safe_import
from vkbench.core.lowering import timed_partition
from vkbench.core.rss import PeakRSS
from vkbench.workloads.graphs import Blocks

_exir = safe_import("executorch.exir")


def blocks_edge_program(n: int) -> Any:
    """The edge-dialect program of ``Blocks(n)``, ready for ``partition``."""
    exir = require(_exir)
    torch.manual_seed(0)
    module = Blocks(n).eval()
    with torch.no_grad():
        exported = torch.export.export(module, Blocks.example_inputs(), strict=False)
    return exir.to_edge(exported).exported_program()


def call_nodes(program: Any) -> int:
    return sum(1 for node in program.graph.nodes if node.op == "call_function")


@dataclass
class ScalingPoint:
    """One size: partitions found, graph nodes, seconds split by phase.

    ``work_seconds`` is the wall time of the whole record (building the edge
    program and partitioning it once): what the numbers of this size cost.
    """

    blocks: int
    nodes: int
    partitions: int
    seconds: float
    phases: dict[str, float] = field(default_factory=dict)
    edge_seconds: float = 0.0
    added_rss_mb: float = 0.0  #: peak RSS during ``partition`` above the RSS before it, MiB
    work_seconds: float = 0.0


def measure_keeping_program(n: int) -> tuple[ScalingPoint, Any]:
    """:func:`measure`, also returning the (untouched) edge program for further partitions."""
    start = time.perf_counter()
    program = blocks_edge_program(n)
    edge_seconds = time.perf_counter() - start
    nodes = call_nodes(program)
    partitioned = copy.deepcopy(program)  # partition tags nodes in place; keep a clean original
    with PeakRSS() as rss:
        partitions, phases = timed_partition(partitioned)
    point = ScalingPoint(
        n, nodes, partitions, phases["total"], phases, round(edge_seconds, 3),
        added_rss_mb=round(rss.added_mb, 1), work_seconds=round(time.perf_counter() - start, 3),
    )
    return point, program


def measure(n: int) -> ScalingPoint:
    """Build ``Blocks(n)``'s edge program and partition it once, instrumented."""
    return measure_keeping_program(n)[0]


def loglog_exponent(sizes: list[int], seconds: list[float]) -> float | None:
    """Least-squares slope of log(seconds) against log(size); None if < 2 sizes."""
    pairs = [(math.log(n), math.log(s)) for n, s in zip(sizes, seconds, strict=True) if s > 0]
    if len({x for x, _ in pairs}) < 2:
        return None
    mean_x = sum(x for x, _ in pairs) / len(pairs)
    mean_y = sum(y for _, y in pairs) / len(pairs)
    num = sum((x - mean_x) * (y - mean_y) for x, y in pairs)
    den = sum((x - mean_x) ** 2 for x, _ in pairs)
    return num / den


@dataclass
class Noise:
    """Repeated partitions of one size, each timed by the wall clock and by process CPU time."""

    blocks: int
    wall: list[float]
    cpu: list[float]

    @staticmethod
    def cv(samples: list[float]) -> float:
        """Coefficient of variation (sample standard deviation / mean)."""
        mean = sum(samples) / len(samples)
        if len(samples) < 2 or not mean:
            return 0.0
        return math.sqrt(sum((s - mean) ** 2 for s in samples) / (len(samples) - 1)) / mean

    def to_json(self) -> dict[str, Any]:
        return {"blocks": self.blocks, "wall": self.wall, "cpu": self.cpu,
                "wall_cv": round(self.cv(self.wall), 4), "cpu_cv": round(self.cv(self.cpu), 4)}


def sample_noise(n: int, repeat: int) -> Noise:
    """Partition fresh copies of ``Blocks(n)`` ``repeat`` times; both clocks read around each call.

    Both clocks time the *same* calls, so their spread compares the timers,
    not two runs: on a shared machine other processes stretch wall time but
    not this process's CPU time (``time.process_time``, asv's ``timer``).
    """
    program = blocks_edge_program(n)
    noise = Noise(n, [], [])
    for _ in range(repeat):
        fresh = copy.deepcopy(program)
        wall, cpu = time.perf_counter(), time.process_time()
        timed_partition(fresh)
        noise.cpu.append(round(time.process_time() - cpu, 4))
        noise.wall.append(round(time.perf_counter() - wall, 4))
    return noise
