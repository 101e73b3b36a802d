"""Every ``VulkanPartitioner.partition`` exports ExecuTorch's constant RoPE pattern graphs again.

Row: partition_reexports_pattern_graphs (owner: ExecuTorch Vulkan partitioner; kind: performance).
Costs: about 2.5 s of CPU per partition on a 2-core x86 machine, whatever the graph (here a Linear).
Needs: torch 2.11.0 and executorch 1.5.1 from PyPI (lowering only, no Vulkan runtime).
Expected: error: the second partition exported the pattern graphs again

``backends/vulkan/patterns/rope.py`` and ``rope_hf.py`` put ``@lru_cache`` above
``@register_pattern_graph``, which registers the function it is given and returns it: the registry
``fusable_patterns`` holds the undecorated function, and the cache is never used.
Exit status 0: the second partition exported them again; 1: it exported nothing (fixed).
"""

import sys
import time

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.backends.vulkan.patterns import fusable_patterns
from executorch.exir import to_edge


def main() -> int:
    graph_fns = {name: e.get_graphs_fn for name, e in fusable_patterns.items() if e.get_graphs_fn}
    real, calls, exports = torch.export.export, [], []
    owners = [torch.export] + [m for m in {sys.modules[f.__module__] for f in graph_fns.values()}
                               if getattr(m, "export", None) is real]  # `from torch.export import export`

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()).eval()
    programs = [to_edge(torch.export.export(model, (torch.randn(2, 8),))).exported_program() for _ in "12"]
    try:
        for owner in owners:
            owner.export = counted
        for number, program in enumerate(programs, start=1):
            calls.clear()
            start = time.process_time()
            VulkanPartitioner().partition(program)
            exports.append(len(calls))
            print(f"partition {number}: {time.process_time() - start:.2f} s CPU, {len(calls)} exports")
    finally:
        for owner in owners:
            owner.export = real
    for name, fn in graph_fns.items():
        cached = getattr(sys.modules[fn.__module__], fn.__name__)
        if cached is not fn and hasattr(cached, "cache_info"):
            print(f"{name}: registered {fn.__name__} lacks its lru_cache ({cached.cache_info()})")
    if not exports[1]:
        print(f"no error: the second partition exported nothing (the first: {exports[0]})")
        return 1
    print(f"error: the second partition exported the pattern graphs again ({exports[1]} exports)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
