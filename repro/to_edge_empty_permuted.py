"""``to_edge`` turns ``empty_like`` of a transposed tensor into ``aten.empty_permuted``, then refuses it.

Row: to_edge_empty_permuted (owner: exir; probe: empty_like_transposed).
Blocks: smolvla/denoise_step in the default edge config (and smolvla/prefix once bucketize is let
through). Letting the op through (``_core_aten_ops_exception_list``) lowers, but the program cannot
load: no kernel implements it (row load_operator_missing_empty_permuted).
Needs: torch 2.11.0 and executorch 1.5.1 from PyPI (lowering only, no Vulkan runtime).
Expected: SpecViolationError: Operator torch._ops.aten.empty_permuted.default is not in Core ATen opset

The exported graph holds ``aten.empty_like``; ExecuTorch's own decomposition makes it ``empty_permuted``
(to keep the transposed strides), an op outside the Core ATen opset its verifier requires.
Exit status 0: the failure reproduced; 1: it lowered.
"""

import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower


class EmptyLikeTransposed(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x.transpose(0, 1)).fill_(1.0) + x.transpose(0, 1)


def main() -> int:
    with torch.no_grad():
        program = torch.export.export(EmptyLikeTransposed().eval(), (torch.randn(4, 6),), strict=False)
    print("exported:", sorted({str(n.target) for n in program.graph.nodes if n.op == "call_function"}))
    try:
        to_edge_transform_and_lower(program, partitioner=[VulkanPartitioner()]).to_executorch()
    except Exception as error:  # the documented failure
        print(f"error: {type(error).__name__}: {str(error).strip().splitlines()[0]}")
        return 0
    print("no error: lowered")
    return 1


if __name__ == "__main__":
    sys.exit(main())
