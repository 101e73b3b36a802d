"""A binary op on a 0-d tensor is delegated, and loading it indexes an empty size list.

Row: load_range_check (owner: Vulkan runtime; probe: div_0d).
Blocks on the GPU: groot/action_step, vla_jepa/action_step (``log(10000) / half_dim``).
Needs: a Vulkan-enabled ExecuTorch whose Python runtime can execute (``vkbench build full``, then run
this with ``.venv-vulkan-off/bin/python``; docs/runtime.md). Recorded on lavapipe
(results/bugs/repro-runs-*.json). The PyPI wheel has no VulkanBackend: there this lowers, then exits 2.
Expected: vector::_M_range_check

``t / 64`` of a 0-d tensor stops in div -> check_binary_op_args ->
calculate_broadcasted_output_size (``std::vector::at(-1)`` on the 0-d tensor's empty sizes), found
with gdb on groot/action_step. Exit status 0: the failure reproduced; 1: it loaded and ran; 2: no
VulkanBackend in this executorch.
"""

import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime


class ScaleByZeroDim(torch.nn.Module):
    def forward(self, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return x * (scale / 64)


def build() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    return ScaleByZeroDim(), (torch.randn(4, 8), torch.tensor(9.21))


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
