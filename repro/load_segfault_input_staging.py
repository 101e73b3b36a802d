"""A 5-D input that a Vulkan delegate only passes through crashes the runtime (SIGSEGV) while loading.

Row: load_segfault_input_staging (owner: Vulkan runtime; probe: clone_5d, the same module).
Blocks on the GPU: fastwam/vae_encoder (the Wan VAE's feature cache: ``x[:, :, -2:].clone()`` of one frame).
Needs: a Vulkan-enabled ExecuTorch (``vkbench build full``; run this with ``.venv-vulkan-off/bin/python``,
docs/runtime.md); it only loads, so any torch will do. Recorded on lavapipe (results/bugs/repro-runs-*.json).
The PyPI wheel has no VulkanBackend: there this lowers, then exits 2.
Expected: load crashed: SIGSEGV

The Vulkan preprocess drops ``x.clone()``: the 5-D ``x`` becomes an input of the delegate that is also its
output and that no op uses, so the memory-tagging pass gives it no storage (``DEFAULT_STORAGE``) and the
runtime makes it a 3-D texture. A tensor of more than 4 dims gets no uniform data, and staging the input
(set_input_tensor -> add_staging_to_tensor_node -> texture_meta_ubo -> logical_limits) reads through that null
pointer. The same module on 4-D inputs loads; a 5-D input an op uses gets BUFFER storage and loads. Found with
gdb on fastwam/vae_encoder (its delegate 15 of 89, input (1, 16, 1, 112, 224)). The load runs in a child
process, so the crash is reported here. Exit status 0: it crashed; 1: it loaded; 2: no VulkanBackend.
"""

import subprocess
import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime

#: The child's whole job: load the program read from stdin (the Vulkan delegate is built at load_method).
LOAD = ("import sys; from executorch.runtime import Runtime; "
        "Runtime.get().load_program(sys.stdin.buffer.read()).load_method('forward')")


class CloneAndScale(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x.clone(), y * 2.0


def main() -> int:
    module, inputs = CloneAndScale(), (torch.randn(1, 4, 1, 8, 8), torch.randn(1, 4, 1, 8, 8))
    with torch.no_grad():
        program = torch.export.export(module.eval(), inputs, strict=False)
    lowered = to_edge_transform_and_lower(program, partitioner=[VulkanPartitioner()]).to_executorch()
    print(f"lowered: {len(lowered.buffer)} bytes", flush=True)
    runtime = Runtime.get()
    if not runtime.backend_registry.is_available("VulkanBackend"):
        print("skipped: this executorch has no VulkanBackend (needs a Vulkan-enabled build)")
        return 2
    runtime.load_program(lowered.buffer)  # parses the program; the delegate is built by load_method
    child = subprocess.run([sys.executable, "-c", LOAD], input=lowered.buffer, capture_output=True,
                           timeout=600)
    if child.returncode < 0:  # killed by a signal: 11 is SIGSEGV on Linux
        name = {-11: "SIGSEGV", -6: "SIGABRT"}.get(child.returncode, "a signal")
        print(f"error: load crashed: {name} (exit {child.returncode})")
        return 0
    said = (child.stderr.decode(errors="replace").strip().splitlines() or ["loaded"])[-1]
    print(f"no crash: load exited {child.returncode}: {said}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
