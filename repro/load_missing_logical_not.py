"""The partitioner delegates ``aten.logical_not``, which the Vulkan runtime does not have.

Row: load_missing_logical_not (owner: Vulkan runtime; probe: logical_not).
Blocks on the GPU: xvla/prefix, xvla/denoise_step.
Needs: a Vulkan-enabled ExecuTorch whose Python runtime can execute (``vkbench build full``, then run
this with ``.venv-vulkan-off/bin/python``; docs/runtime.md). Recorded there on lavapipe and the H200
(the probe's ``ProbeLadder`` rung: lowered, stops at load). The PyPI wheel has no VulkanBackend: there
this lowers, then exits 2.
Expected: Missing operator: aten.logical_not.default

VulkanBackend.cpp:480 finds no operator for the node while building the graph, and the check
aborts the process (no Python exception): the message is the last line on stderr. Delegated whole
since 666ba0b1 (#21070, which registers the comparisons that feed it).
Exit status: the abort (SIGABRT, 134 from a shell) when the failure reproduces; 1: it loaded and ran
(the max abs diff against eager is printed); 2: no VulkanBackend in this executorch.
"""

import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime


class LogicalNot(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.where(torch.logical_not(x > 0), x, x * 2.0)


def main() -> int:
    torch.manual_seed(0)
    module, inputs = LogicalNot(), (torch.randn(1, 16, 32),)
    with torch.no_grad():
        program = torch.export.export(module.eval(), inputs, strict=False)
        eager = module(*inputs)
    lowered = to_edge_transform_and_lower(program, partitioner=[VulkanPartitioner()]).to_executorch()
    print(f"lowered: {len(lowered.buffer)} bytes", flush=True)
    runtime = Runtime.get()
    if not runtime.backend_registry.is_available("VulkanBackend"):
        print("skipped: this executorch has no VulkanBackend (needs a Vulkan-enabled build)")
        return 2
    try:
        method = runtime.load_program(lowered.buffer).load_method("forward")
        outputs = method.execute(list(inputs))
    except Exception as error:  # the documented failure (the runtime logs its check above)
        print(f"error: {type(error).__name__}: {str(error).strip().splitlines()[0]}")
        return 0
    print(f"no error: ran, max abs diff {(outputs[0] - eager).abs().max().item():.3g}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
