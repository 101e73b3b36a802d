"""The Vulkan runtime refuses a ``native_layer_norm`` without weight at load.

Row: load_layer_norm_no_weight (owner: Vulkan runtime; probe: layer_norm_no_affine).
Blocks on the GPU: multi_task_dit/denoise_step, lingbot_va/action_step_real_rope,
lingbot_va/video_step_real_rope.
Needs: a Vulkan-enabled ExecuTorch whose Python runtime can execute (``vkbench build full``, then run
this with ``.venv-vulkan-off/bin/python``; docs/runtime.md). Recorded there on lavapipe and the H200
(the probe's ``ProbeLadder`` rung: lowered, stops at load). The PyPI wheel has no VulkanBackend: there
this lowers, then exits 2.
Expected: native_layer_norm requires weight to be non-None

``LayerNorm(32, elementwise_affine=False)`` is delegated whole (the partitioner accepts it) and the
runtime's NativeLayerNorm.cpp:95 checks that the weight is not None when it builds the graph.
Exit status 0: the failure reproduced; 1: it loaded and ran (the max abs diff against eager is printed);
2: no VulkanBackend in this executorch.
"""

import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime


def main() -> int:
    torch.manual_seed(0)
    module, inputs = torch.nn.LayerNorm(32, elementwise_affine=False), (torch.randn(1, 16, 32),)
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
