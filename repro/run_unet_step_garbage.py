"""GroupNorm on an (N, C, L) input runs on Vulkan but its output is wrong: diffusion/unet_step's wrong output.

Row: run_unet_step_garbage (owner: Vulkan runtime; probe: group_norm_3d).
Blocks on the GPU: diffusion/unet_step (its Conv1d -> GroupNorm -> Mish blocks).
Needs: a Vulkan-enabled ExecuTorch whose Python runtime can execute (``vkbench build full``, then run
this with ``.venv-vulkan-off/bin/python``; docs/runtime.md). Recorded on lavapipe and NVIDIA
(results/bugs/repro-runs-*.json). The PyPI wheel has no VulkanBackend: there this lowers, then exits 2.
Expected: error: wrong output

``GroupNorm(2, 8)`` on (1, 8, 16) is delegated whole, loads, executes and misses eager: all NaN on
lavapipe, finite but unrelated on NVIDIA (SNR 0 dB). Wrong = NaN or SNR below 40 dB (the ladder's
"does not match"). A (N, C, H, W) input is right. Found by ``vkbench runtime culprit diffusion/unet_step
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
    output = outputs[0]
    nan = int(torch.isnan(output).sum())
    noise, signal = ((output.double() - eager.double()) ** 2).sum(), (eager.double() ** 2).sum()
    diff, snr = (output - eager).abs().max().item(), float(10 * torch.log10(signal / noise))  # inf: equal
    if nan or snr < 40:  # the ladder's "does not match"
        print("error: wrong output: " + (f"NaN ({nan} of {output.numel()} values)" if nan
                                         else f"max abs diff {diff:.3g}, SNR {snr:.1f} dB"))
        return 0
    print(f"no error: matches eager, max abs diff {diff:.3g}, SNR {snr:.1f} dB")
    return 1


if __name__ == "__main__":
    sys.exit(main())
