"""FastWAM zeroes each prompt's padding with a slice that starts at a data-dependent length.

Row: export_fastwam_prompt_zeroing (owner: LeRobot model code; no probe: ExecuTorch is not involved).
Blocks: fastwam/text_encoder (fastwam/text_encoder_masked_zeroing masks instead; it exports, then hits row
preprocess_inputless_partition).
Where: lerobot fastwam ``encode_prompt`` (``for i, v in enumerate(seq_lens): prompt_emb[i, v:] = 0``)
Needs: torch 2.11.0 (torch.export only).
Expected: GuardOnDataDependentSymNode: Could not extract specialized integer from data-dependent expression
Exit status 0: the failure reproduced; 1: it exported.
"""

import sys

import torch


class PromptZeroing(torch.nn.Module):
    def forward(self, prompt_emb: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        prompt_emb = prompt_emb.clone()
        for i, v in enumerate(mask.gt(0).sum(dim=1).long()):
            prompt_emb[i, v:] = 0
        return prompt_emb


def main() -> int:
    module, inputs = PromptZeroing(), (torch.randn(1, 8, 4), torch.tensor([[1, 1, 1, 0, 0, 0, 0, 0]]))
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
