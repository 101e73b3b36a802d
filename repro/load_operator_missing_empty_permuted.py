"""A program with ``aten.empty_permuted`` on the CPU cannot load: no ExecuTorch kernel implements it.

Row: load_operator_missing_empty_permuted (owner: exir; no probe: the op only reaches a program when
let through ``to_edge``, see row to_edge_empty_permuted and its probe empty_like_transposed).
Blocks: smolvla/denoise_step at load (``Method load failed: error 20`` = 0x14, OperatorMissing), lowered
by vkbench with the op let through as ``to_edge``'s message suggests; empty_permuted is the only CPU op
of that entry without a portable kernel.
Needs: torch 2.11.0 and executorch 1.5.1 from PyPI: loading needs no Vulkan runtime, the op is on the CPU.
Expected: Missing operator: [0] aten::empty_permuted.out

The runtime prints the missing operator on stderr, then ``load_method`` raises
``RuntimeError: Failed to load method forward, error: 0x:14``.
Exit status 0: the failure reproduced; 1: the method loaded.
"""

import sys

import torch
from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower
from executorch.runtime import Runtime


class EmptyLikeTransposed(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x.transpose(0, 1)).fill_(1.0) + x.transpose(0, 1)


def main() -> int:
    with torch.no_grad():
        program = torch.export.export(EmptyLikeTransposed().eval(), (torch.randn(4, 6),), strict=False)
    config = EdgeCompileConfig(_core_aten_ops_exception_list=[torch.ops.aten.empty_permuted.default])
    buffer = to_edge_transform_and_lower(program, compile_config=config).to_executorch().buffer
    print(f"lowered: {len(buffer)} bytes, empty_permuted on the CPU", flush=True)
    loaded = Runtime.get().load_program(buffer)
    try:
        loaded.load_method("forward")
    except Exception as error:  # the documented failure (the missing operator is logged above)
        print(f"error: {type(error).__name__}: {str(error).strip().splitlines()[0]}")
        return 0
    print("no error: loaded")
    return 1


if __name__ == "__main__":
    sys.exit(main())
