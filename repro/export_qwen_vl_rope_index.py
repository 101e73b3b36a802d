"""Qwen-VL's M-RoPE index groups the token types in Python: the VLM prefix does not export.

Row: export_qwen_vl_rope_index (owner: LeRobot model code (transformers' Qwen2.5-VL/Qwen3-VL); no probe:
ExecuTorch is not involved).
Blocks: eo1/prefix (Qwen2.5-VL), groot/backbone (Qwen3-VL).
Where: transformers ``modeling_qwen2_5_vl.py``/``modeling_qwen3_vl.py`` ``get_rope_index``
(``itertools.groupby(enumerate(input_token_type.tolist()))``)
Needs: torch 2.11.0 (torch.export only).
Expected: GuardOnDataDependentSymNode: Could not guard on data-dependent expression

``tolist()`` makes each token type an unbacked integer, and ``groupby`` compares them in Python.
vkbench could pass the position ids in as inputs (eo1/denoise_step does); that is not done.
Exit status 0: the failure reproduced; 1: it exported.
"""

import itertools
import sys

import torch


class RopeIndex(torch.nn.Module):
    def forward(self, token_types: torch.Tensor) -> torch.Tensor:
        starts = [group[0][0] for _, group in
                  ((key, list(items)) for key, items in itertools.groupby(enumerate(token_types.tolist()),
                                                                          lambda pair: pair[1]))]
        return torch.tensor(starts)


def main() -> int:
    module, inputs = RopeIndex(), (torch.tensor([0, 0, 1, 1, 1, 0]),)
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
