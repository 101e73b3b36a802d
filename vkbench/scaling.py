"""How the Vulkan partitioner's time grows with graph size (``Blocks(n)``).

The seed saw 2.6 s at 50 blocks and 95 s at 400: super-linear growth that
comes from torch.fx's ``CapabilityBasedPartitioner.propose_partitions``. We
time ``VulkanPartitioner.partition`` alone on a prebuilt edge program (as the
seed did), split by phase, and fit ``seconds ~ n**k`` across sizes.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from vkbench.compat import require, safe_import
from vkbench.graphs import Blocks
from vkbench.lowering import timed_partition

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
    """One size: partitions found, graph nodes, seconds split by phase."""

    blocks: int
    nodes: int
    partitions: int
    seconds: float
    phases: dict[str, float] = field(default_factory=dict)
    edge_seconds: float = 0.0


def measure(n: int) -> ScalingPoint:
    start = time.perf_counter()
    program = blocks_edge_program(n)
    edge_seconds = time.perf_counter() - start
    nodes = call_nodes(program)
    partitions, phases = timed_partition(program)
    return ScalingPoint(n, nodes, partitions, phases["total"], phases, round(edge_seconds, 3))


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
