"""The Vulkan partitioner crashes on a one-piece ``split_with_sizes_copy``.

Row: partition_split_one_piece (owner: ExecuTorch Vulkan partitioner; probe: split_one_piece).
Blocks: gaussian_actor/deterministic (SAC's one-camera ``torch.chunk(features, 1)``).
Needs: torch 2.11.0 and executorch 1.5.1 from PyPI (lowering only, no Vulkan runtime).
Expected: AttributeError: 'list' object has no attribute 'shape'

``split(relu(x), 1)`` of a (1, 8) tensor has one piece; the node's value is a list of one tensor, and
``utils.filter_invalid_reprs`` reads ``.shape`` off it while the partitioner asks whether the node is
supported. Exit status 0: the failure reproduced; 1: it lowered.
"""

import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower


class OnePieceSplit(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.split(torch.relu(x), 1)[0].unsqueeze(0)


def main() -> int:
    with torch.no_grad():
        program = torch.export.export(OnePieceSplit().eval(), (torch.randn(1, 8),), strict=False)
    try:
        to_edge_transform_and_lower(program, partitioner=[VulkanPartitioner()]).to_executorch()
    except Exception as error:  # the documented failure
        print(f"error: {type(error).__name__}: {str(error).strip().splitlines()[0]}")
        return 0
    print("no error: lowered")
    return 1


if __name__ == "__main__":
    sys.exit(main())
