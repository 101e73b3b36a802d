"""Planted changes to the installed ExecuTorch, innocent and guilty, counted in one child process.

Each plant edits the source of one ExecuTorch module (or does work before the count) and is counted
like ``PartitionWork``'s record (:func:`vkbench.workloads.partition_work.count_in_this_process`,
position-hashed nodes, one torch thread). All plants run in one child: a plant's module is
re-executed from its patched source in its own namespace, counted, and re-executed from the
original (a registered pattern is taken out of the registry again), so the child imports torch and
ExecuTorch once. :data:`PLANTS` says what each one is and what the gate must say of it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass

from gate_repo import SMALL_ANCHOR as SUPPORT
from gate_repo import SMALL_PATCH as USERS_PASS  # the gate repo's `small` commit, planted in place

from vkbench.workloads.partition_work import CHILD_ENV


@dataclass(frozen=True)
class Plant:
    """One planted change: ``anchor`` in ``module``'s source gets ``patch`` before (or after) it."""

    name: str
    innocent: bool
    module: str = ""  #: the ExecuTorch module patched ("" for work done before the count)
    anchor: str = ""
    patch: str = ""
    after: bool = False  #: the patch goes after the anchor instead of before it
    unrelated_nodes: int = 0  #: nodes of an unrelated graph hashed before the count
    phase: str = ""  #: the phase a guilty plant must be named by
    what: str = ""


PARTITIONER = "executorch.backends.vulkan.partitioner.vulkan_partitioner"
DTYPES = '''        target = node.target
        if (
            node.target == torch.ops.higher_order.auto_functionalized
'''
NEW_PATTERN = '''

@register_pattern_graph("vkbench_plant_gated_mlp")
def _vkbench_plant_gated_mlp_graphs() -> List[torch.fx.GraphModule]:
    # A pattern that nothing in Blocks(n) matches: gelu(x @ w) * sigmoid(x @ v) - x, at 3 shapes.
    class GatedMlp(torch.nn.Module):
        def __init__(self, width: int) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(width, width))
            self.v = torch.nn.Parameter(torch.randn(width, width))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.gelu(x @ self.w) * torch.sigmoid(x @ self.v) - x

    return [torch.export.export(GatedMlp(w), (torch.randn(2, w),)).module() for w in (4, 8, 16)]
'''
OTHER_BACKEND = "executorch.backends.xnnpack.partition.xnnpack_partitioner"
DTYPE_RECHECK = """        for arg in node.all_input_nodes:  # re-check every input's dtype
            if utils.is_tensor_node(arg) and not utils.io_dtypes_are_supported(arg):
                return False
"""
SIGMOID_REFUSED = """        if node.target == exir_ops.edge.aten.sigmoid.default:  # a changed decision
            return False
"""

PLANTS = [
    Plant("comment", True, PARTITIONER, SUPPORT,
          "        # Ask the op registry whether this node can run on Vulkan (a comment only).\n",
          what="a comment in vulkan_partitioner.py"),
    Plant("unrelated-3", True, unrelated_nodes=3, what="3 unrelated fx nodes hashed before the count"),
    Plant("unrelated-52", True, unrelated_nodes=52, what="52 unrelated fx nodes hashed before the count"),
    Plant("unrelated-517", True, unrelated_nodes=517, what="517 unrelated fx nodes hashed before the count"),
    Plant("new-pattern", True, "executorch.backends.vulkan.patterns.rope", "", NEW_PATTERN, after=True,
          what="a new graph pattern (3 exported graphs) that matches nothing in Blocks(n)"),
    Plant("other-backend", True, OTHER_BACKEND, "class XnnpackPartitioner",
          "_VKBENCH_PLANT_TABLE = sorted(range(20000), reverse=True)  # work of another backend\n\n\n",
          what="a change in the XNNPACK partitioner's file"),
    Plant("support-pass", False, PARTITIONER, SUPPORT, USERS_PASS, phase="is_node_supported",
          what="one extra pass over the graph per support check (~3 % of the total)"),
    Plant("dtype-recheck", False, PARTITIONER, DTYPES, DTYPE_RECHECK, phase="is_node_supported",
          what="the support check re-checks its inputs' dtypes"),
    Plant("sigmoid-refused", False, PARTITIONER, DTYPES, SIGMOID_REFUSED, phase="propose_partitions",
          what="sigmoid no longer supported: partitions and torch.fx's work change"),
]


def _apply(plant: Plant) -> tuple[object, str, set[str]]:
    """Patch ``plant``'s module in place; returns it, its original source and the registry's names."""
    import importlib

    from executorch.backends.vulkan.patterns import fusable_patterns

    module = importlib.import_module(plant.module)
    original = open(module.__file__).read()
    if plant.anchor:
        assert plant.anchor in original, f"{plant.name}: anchor not in {plant.module}"
        patched = original.replace(plant.anchor, plant.anchor + plant.patch if plant.after
                                   else plant.patch + plant.anchor, 1)
    else:
        patched = original + plant.patch
    exec(compile(patched, module.__file__, "exec"), module.__dict__)  # noqa: S102 - the plant
    return module, original, set(fusable_patterns)


def _undo(module: object, original: str, registered: set[str]) -> None:
    from executorch.backends.vulkan.patterns import fusable_patterns

    exec(compile(original, module.__file__, "exec"), module.__dict__)  # noqa: S102 - back as installed
    for name in set(fusable_patterns) - registered:
        del fusable_patterns[name]
    for name in [n for n in fusable_patterns if n.startswith("vkbench_plant")]:
        del fusable_patterns[name]


def child(blocks: int, names: list[str]) -> None:
    """In the child: count ``base``, each named plant, and ``base`` again; one JSON line each.

    A first count warms torch.export's caches and fills a cache of the registered patterns' graphs
    (``pattern_cache.cache_working``, the bug row's what-if), kept for every later count: a count then
    costs its partition, not three exports. Only ``pattern_graphs``, which the gate never judges, differs
    from an uncached count; a new pattern's graphs are not in the cache, so they are built in its count."""
    import logging

    from vkbench.workloads import node_orders, partition_work

    logging.disable(logging.INFO)
    partition_work.prepare_this_process()
    by_name = {plant.name: plant for plant in PLANTS}
    from vkbench.results import pattern_cache

    with pattern_cache.cache_working() as cached:
        partition_work.count_in_this_process(blocks)  # the warm-up, filling the cache
    for name in ["base", *names, "base-again"]:
        plant = by_name.get(name)
        undo = None
        if plant is not None and plant.unrelated_nodes:
            node_orders._unrelated_nodes(plant.unrelated_nodes)
        elif plant is not None:
            undo = _apply(plant)
        try:
            with pattern_cache.cache_working(cached):
                record = partition_work.count_in_this_process(blocks)
        finally:
            if undo is not None:
                _undo(*undo)
        print(json.dumps({"plant": name, "events": record["events"], "partitions": record["partitions"],
                          "patterns": record["pattern_graph_events"]}), flush=True)


def count_plants(blocks: int, names: list[str]) -> dict[str, dict]:
    """``plant -> {"events", "partitions", "patterns"}`` of Blocks(``blocks``), ``base`` included."""
    code = f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); import plants; " \
           "plants.child(int(sys.argv[1]), sys.argv[2:])"
    done = subprocess.run([sys.executable, "-c", code, str(blocks), *names], capture_output=True, text=True,
                          env={**os.environ, **CHILD_ENV}, timeout=1800, check=False)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0, done.stderr[-3000:]
    return {line.pop("plant"): line for line in lines}
