"""Qwen3-VL interpolates its position embedding over grid sizes read from a tensor.

Row: export_qwen3_vl_pos_embed (owner: LeRobot model code (transformers' Qwen3-VL); no probe: ExecuTorch is
not involved).
Blocks: vla_jepa/backbone.
Where: transformers ``modeling_qwen3_vl.py`` ``fast_pos_embed_interpolate`` (``torch.linspace(0, n - 1, h)``
with ``h`` from ``grid_thw.tolist()``)
Needs: torch 2.11.0 (torch.export only).
Expected: GuardOnDataDependentSymNode: Could not extract specialized integer from data-dependent expression

``linspace`` needs a concrete step count; ``h`` is data-dependent.
Exit status 0: the failure reproduced; 1: it exported.
"""

import sys

import torch


class PosEmbedInterpolate(torch.nn.Module):
    def forward(self, grid_thw: torch.Tensor) -> torch.Tensor:
        _, h, w = grid_thw.tolist()[0]
        return torch.linspace(0, 47, h)[:, None] + torch.linspace(0, 47, w)[None, :]


def main() -> int:
    module, inputs = PosEmbedInterpolate(), (torch.tensor([[1, 14, 14]]),)
    try:
        with torch.no_grad():
            torch.export.export(module.eval(), inputs, strict=False)
    except Exception as error:  # the documented failure
        print(f"error: {type(error).__name__}: {str(error).strip().splitlines()[0]}")
        return 0
    print("no error: exported")
    return 1


if __name__ == "__main__":
    sys.exit(main())
