"""GroupNorm on an (N, C, L) input runs on Vulkan but returns NaN: diffusion/unet_step's wrong output.

Row: run_unet_step_garbage (owner: Vulkan runtime; probe: group_norm_3d).
Blocks on the GPU: diffusion/unet_step (its Conv1d -> GroupNorm -> Mish blocks).
Needs: a Vulkan-enabled ExecuTorch whose Python runtime can execute (``vkbench build full``, then run
this with ``.venv-vulkan-off/bin/python``; docs/runtime.md). Recorded on lavapipe
(results/bugs/repro-runs-*.json). The PyPI wheel has no VulkanBackend: there this lowers, then exits 2.
Expected: error: output is NaN

``GroupNorm(2, 8)`` on (1, 8, 16) is delegated whole, loads and executes; every output is NaN.
On a (N, C, H, W) input it is right. Found by ``vkbench runtime culprit diffusion/unet_step
--diverges``. Exit status 0: the failure reproduced; 1: the output matched eager; 2: no VulkanBackend.
"""

import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime


def build() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    return torch.nn.GroupNorm(2, 8), (torch.randn(1, 8, 16),)


def main() -> int:
    torch.manual_seed(0)
    module, inputs = build()
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
    if torch.isnan(outputs[0]).any():
        print(f"error: output is NaN ({int(torch.isnan(outputs[0]).sum())} of {outputs[0].numel()} values)")
        return 0
    print(f"no error: ran, max abs diff {(outputs[0] - eager).abs().max().item():.3g}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
