"""A Conv2d with ``padding="valid"`` is delegated but cannot load: make_ivec2 gets a 1-element list.

Row: load_make_ivec2 (owner: Vulkan runtime; probe: conv2d_padding_valid).
Blocks on the GPU: pi0/prefix, pi05/prefix, pi0_fast/prefix (SigLIP's patch embedding).
Needs: a Vulkan-enabled ExecuTorch whose Python runtime can execute (``vkbench build full``, then run
this with ``.venv-vulkan-off/bin/python``; docs/runtime.md). Recorded on lavapipe
(results/bugs/repro-runs-*.json). The PyPI wheel has no VulkanBackend: there this lowers, then exits 2.
Expected: make_ivec2

``Conv2d(3, 8, 14, stride=14, padding="valid")`` exports as ``aten.conv2d.padding`` and is
delegated whole; loading it stops in conv -> create_kernel2d_params -> make_ivec2_from_list
(VecUtils.h:367 ``ints.size() == 2``), found with gdb on pi0/prefix. ``padding=0`` loads.
Exit status 0: the failure reproduced; 1: it loaded and ran; 2: no VulkanBackend in this executorch.
"""

import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime


def build() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    return torch.nn.Conv2d(3, 8, 14, stride=14, padding="valid"), (torch.randn(1, 3, 56, 56),)


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
