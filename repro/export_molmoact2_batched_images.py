"""MolmoAct2 counts its images with ``int(...item())`` before batching them.

Row: export_molmoact2_batched_images (owner: LeRobot model code; no probe: ExecuTorch is not involved).
Blocks: molmoact2/prefix (molmoact2/prefix_fixed_layout runs that glue outside and lowers).
Where: lerobot ``molmoact2_hf_model/modeling_molmoact2.py`` ``build_batched_images``
(``int(raw_counts.sum().item())``)
Needs: torch 2.11.0 (torch.export only).
Expected: GuardOnDataDependentSymNode: Could not extract specialized integer from data-dependent expression

``int()`` of a data-dependent count needs its value at export time.
Exit status 0: the failure reproduced; 1: it exported.
"""

import sys

import torch


class BatchedImages(torch.nn.Module):
    def forward(self, input_ids: torch.Tensor, images: torch.Tensor) -> torch.Tensor:
        total_end_tokens = int((input_ids == 7).sum().item())
        return images[:total_end_tokens] if total_end_tokens == images.shape[0] else images


def main() -> int:
    module, inputs = BatchedImages(), (torch.tensor([[1, 7, 2, 7]]), torch.randn(2, 3, 8, 8))
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
