"""Gemma's RMSNorm (``* (1 + weight)``) is fused into a Vulkan rms_norm that cannot load.

Row: load_prepack_val_is_tref (owner: Vulkan runtime; probe: rms_norm_one_plus_weight).
Blocks on the GPU: pi0/denoise_step, pi05/denoise_step (PaliGemma's and the expert's norms).
Needs: a Vulkan-enabled ExecuTorch whose Python runtime can execute (``vkbench build full``, then run
this with ``.venv-vulkan-off/bin/python``; docs/runtime.md). Recorded on lavapipe
(results/bugs/repro-runs-*.json). The PyPI wheel has no VulkanBackend: there this lowers, then exits 2.
Expected: val_is_tref

The fused rms_norm's weight is ``1 + weight``, computed in the graph; add_rms_norm_node prepacks it
as if it were a constant (Staging.cpp:229 ``graph.val_is_tref(tensor_data)``), found with gdb on
pi0/denoise_step. Exit status 0: the failure reproduced; 1: it loaded and ran; 2: no VulkanBackend.
"""

import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime


class GemmaRMSNorm(torch.nn.Module):
    def __init__(self, dim: int = 32) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * (1.0 + self.weight)


def build() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    return GemmaRMSNorm(32), (torch.randn(1, 16, 32),)


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
