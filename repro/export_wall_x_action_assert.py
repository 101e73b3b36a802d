"""WALL-OSS asserts that the prompt holds action tokens, a data-dependent check.

Row: export_wall_x_action_assert (owner: LeRobot model code; no probe: ExecuTorch is not involved).
Blocks: wall_x/denoise_step (wall_x/denoise_step_without_guards drops it and the MoE skip, and lowers).
Where: lerobot wall_x ``predict`` (``assert action_mask.any()``; the MoE block's ``if mask.sum() == 0:
continue`` too)
Needs: torch 2.11.0 (torch.export only).
Expected: GuardOnDataDependentSymNode: Could not guard on data-dependent expression
Exit status 0: the failure reproduced; 1: it exported.
"""

import sys

import torch


class ActionAssert(torch.nn.Module):
    def forward(self, input_ids: torch.Tensor, embeds: torch.Tensor) -> torch.Tensor:
        action_mask = input_ids == 5
        assert action_mask.any(), "No action token found in input_ids"
        return embeds * action_mask[..., None]


def main() -> int:
    module, inputs = ActionAssert(), (torch.tensor([[1, 5, 5, 2]]), torch.randn(1, 4, 8))
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
