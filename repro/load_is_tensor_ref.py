"""A cross-attention (query shorter than key/value) lowers to Vulkan programs that cannot load.

Row: load_is_tensor_ref (owner: Vulkan runtime; probe: mha_cross).
Blocks on the GPU: act/model, evo1/action_step.
Needs: a Vulkan-enabled ExecuTorch whose Python runtime can execute (``vkbench build full``, then run
this with ``.venv-vulkan-off/bin/python``; docs/runtime.md). Recorded there on lavapipe and the H200
(the probe's ``ProbeLadder`` rung: lowered, stops at load). The PyPI wheel has no VulkanBackend: there
this lowers, then exits 2.
Expected: isTensorRef

``nn.MultiheadAttention(32, 4)``, 5 query and 7 key/value tokens, lowers to 3 Vulkan programs;
loading one stops at Value.h:262 (Expected value to have type TensorRef, got TENSOR).
Exit status 0: the failure reproduced; 1: it loaded and ran (the max abs diff against eager is printed);
2: no VulkanBackend in this executorch.
"""

import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime


class CrossAttention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(32, 4)

    def forward(self, query: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        return self.attention(query, memory, memory, need_weights=False)[0]


def main() -> int:
    torch.manual_seed(0)
    module, inputs = CrossAttention(), (torch.randn(5, 1, 32), torch.randn(7, 1, 32))
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
