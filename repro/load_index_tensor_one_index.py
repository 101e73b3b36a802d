"""The partitioner delegates ``t[:, idx]``, an ``index.Tensor`` the Vulkan runtime refuses at load.

Row: load_index_tensor_one_index (owner: Vulkan runtime; probe: index_dim1).
Blocks on the GPU: vqbet/rollout.
Needs: a Vulkan-enabled ExecuTorch whose Python runtime can execute (``vkbench build full``, then run
this with ``.venv-vulkan-off/bin/python``; docs/runtime.md). Recorded there on lavapipe and the H200
(the probe's ``ProbeLadder`` rung: lowered, stops at load). The PyPI wheel has no VulkanBackend: there
this lowers, then exits 2.
Expected: only one index tensor is supported

The indices are ``[None, idx]`` (the index is on dim 1); IndexTensor.cpp:76 accepts one index
tensor on dim 0 only. Delegated since 1.5.1 (on cff6f4dd and earlier it stayed on the CPU).
Exit status 0: the failure reproduced; 1: it loaded and ran (the max abs diff against eager is printed);
2: no VulkanBackend in this executorch.
"""

import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime


class IndexDim1(torch.nn.Module):
    def forward(self, t: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        return t[:, idx] * 2.0


def main() -> int:
    torch.manual_seed(0)
    module, inputs = IndexDim1(), (torch.randn(4, 6), torch.tensor([0, 2, 3]))
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
