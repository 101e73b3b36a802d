"""``to_edge_transform_and_lower`` fails on a complex RoPE product whose input comes from a parameter.

Row: to_edge_view_as_complex_grad (owner: exir; probe: complex_rope).
Blocks: fastwam/action_step, lingbot_va/action_step, lingbot_va/video_step (their RoPE:
``view_as_complex(q.double()) * freqs``, then ``view_as_real``).
Needs: torch 2.11.0 and executorch 1.5.1 from PyPI (lowering only, no Vulkan runtime).
Expected: view_as_complex_copy does not support automatic differentiation for outputs with complex dtype

The edge program is built by re-running the graph with views replaced by view-copies, with autograd on:
the projection's weight requires grad, so ``view_as_complex_copy`` is asked for a complex gradient. From a
plain input (no ``Linear``) the same product gets further (to a dtype check). No partitioner is needed;
the Vulkan one is passed as a user would. Exit status 0: the failure reproduced; 1: it lowered.
"""

import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower


class ComplexRope(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)
        angles = torch.randn(4, 8)
        self.register_buffer("freqs", torch.polar(torch.ones_like(angles), angles))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pairs = torch.view_as_complex(self.proj(x).to(torch.float64).reshape(1, 4, 8, 2))
        return torch.view_as_real(pairs * self.freqs).flatten(2).to(x.dtype)


def main() -> int:
    torch.manual_seed(0)
    with torch.no_grad():
        program = torch.export.export(ComplexRope().eval(), (torch.randn(1, 4, 16),), strict=False)
    try:
        to_edge_transform_and_lower(program, partitioner=[VulkanPartitioner()]).to_executorch()
    except Exception as error:  # the documented failure
        print(f"error: {type(error).__name__}: {str(error).strip().splitlines()[0]}")
        return 0
    print("no error: lowered")
    return 1


if __name__ == "__main__":
    sys.exit(main())
