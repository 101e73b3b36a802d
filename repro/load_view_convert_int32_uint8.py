"""An int32 -> bool copy is delegated, but the Vulkan runtime has no shader for it.

Row: load_view_convert_int32_uint8 (owner: Vulkan runtime; probe: int32_to_bool).
Blocks on the GPU: multi_task_dit/encoder, eo1/denoise_step, evo1/embedder, wall_x.
Needs: a Vulkan-enabled ExecuTorch whose Python runtime can execute (``vkbench build full``, then run
this with ``.venv-vulkan-off/bin/python``; docs/runtime.md). Recorded on lavapipe
(results/bugs/repro-runs-*.json). The PyPI wheel has no VulkanBackend: there this lowers, then exits 2.
Expected: view_convert_buffer_int32_uint8

``m.to(torch.bool)`` of an int32 tensor becomes a delegated ``_to_dim_order_copy``; loading it
stops in to_dim_order_copy -> add_view_copy_convert_node (ShaderRegistry.cpp:51, no ShaderInfo
view_convert_buffer_int32_uint8), found with gdb on eo1/denoise_step.
Exit status 0: the failure reproduced; 1: it loaded and ran; 2: no VulkanBackend in this executorch.
"""

import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime


class MaskByInt(torch.nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return x * mask.to(torch.bool).to(x.dtype)


def build() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    return MaskByInt(), (torch.randn(4, 8), torch.randint(0, 2, (4, 8), dtype=torch.int32))


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
    print(f"no error: ran, max abs diff {(outputs[0] - eager).abs().max().item():.3g}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
