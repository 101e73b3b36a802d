"""``to_edge`` refuses an op outside the Core ATen opset that no ExecuTorch kernel implements.

Row: to_edge_non_core_no_kernel (owner: exir; probe: bucketize).
Blocks: smolvla/prefix (``aten.bucketize.Tensor``) and vqbet/rollout (``aten.multinomial.default``,
the same error; pass ``multinomial`` to try that one) in the default edge config. Letting the op
through lowers it to the CPU, but neither op has a portable kernel, so such a program cannot load.
Needs: torch 2.11.0 and executorch 1.5.1 from PyPI (lowering only, no Vulkan runtime).
Expected: SpecViolationError: Operator torch._ops.aten.bucketize.Tensor is not in Core ATen opset

Exit status 0: the failure reproduced; 1: it lowered.
"""

import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower


class Bucketize(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.bucketize(x, torch.tensor([-1.0, 0.0, 1.0]))


class Multinomial(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.multinomial(torch.softmax(x, dim=-1), 1)


def main(op: str) -> int:
    module = Multinomial() if op == "multinomial" else Bucketize()
    with torch.no_grad():
        program = torch.export.export(module.eval(), (torch.randn(4, 6),), strict=False)
    try:
        to_edge_transform_and_lower(program, partitioner=[VulkanPartitioner()]).to_executorch()
    except Exception as error:  # the documented failure
        print(f"error: {type(error).__name__}: {str(error).strip().splitlines()[0]}")
        return 0
    print("no error: lowered")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bucketize"))
