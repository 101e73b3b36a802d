"""Vulkan preprocess fails on a partition with no tensor inputs.

Row: preprocess_inputless_partition (owner: ExecuTorch Vulkan partitioner/preprocess;
probe: inputless_partition).
Blocks: fastwam/text_encoder_masked_zeroing (its padding mask starts from ``arange(L)``).
Needs: torch 2.11.0 and executorch 1.5.1 from PyPI (lowering only, no Vulkan runtime).
Expected: Exception: An error occurred when running the 'FuseBatchNormPass' pass after the following passes

``log1p`` (no Vulkan kernel) cuts the graph, so ``arange(8) * 2`` is a Vulkan partition of its own
with no inputs. Vulkan preprocess runs ``FuseBatchNormPass`` (an ExportPass) on it: with no fake tensor
among the inputs the pass makes a new FakeTensorMode, and recomputing the range constraints then
finds two (``AssertionError: fake mode ... doesn't match mode ...``, chained as the cause).
Exit status 0: the failure reproduced; 1: it lowered.
"""

import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower


class InputlessPartition(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log1p(torch.arange(8, dtype=torch.float32) * 2.0) + x


def main() -> int:
    with torch.no_grad():
        program = torch.export.export(InputlessPartition().eval(), (torch.randn(8),), strict=False)
    try:
        to_edge_transform_and_lower(program, partitioner=[VulkanPartitioner()]).to_executorch()
    except Exception as error:  # the documented failure
        print(f"error: {type(error).__name__}: {str(error).strip().splitlines()[0]}")
        if error.__cause__ is not None:
            print(f"cause: {type(error.__cause__).__name__}: {str(error.__cause__).strip().splitlines()[0]}")
        return 0
    print("no error: lowered")
    return 1


if __name__ == "__main__":
    sys.exit(main())
