"""The DDPM scheduler looks its timestep up with ``nonzero``: the sampling loop does not export.

Row: export_ddpm_previous_timestep (owner: LeRobot model code (diffusers' DDPMScheduler); no probe:
ExecuTorch is not involved).
Blocks: diffusion/sample_loop (the DDIM scheduler fails too, on ``.item()``).
Where: diffusers/schedulers/scheduling_ddpm.py ``previous_timestep`` (``index == self.timesteps.shape[0] -
1``)
Needs: torch 2.11.0 (torch.export only).
Expected: GuardOnDataDependentSymNode: Could not guard on data-dependent expression

LeRobot's ``conditional_sample`` always calls ``set_timesteps``, so ``num_inference_steps`` is set and
the step takes this branch whatever the config; the index is data-dependent and the ``if`` needs its value.
Exit status 0: the failure reproduced; 1: it exported.
"""

import sys

import torch


class PreviousTimestep(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("timesteps", torch.arange(90, -1, -10))

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        index = (self.timesteps == timestep).nonzero(as_tuple=True)[0][0]
        if index == self.timesteps.shape[0] - 1:
            return sample
        return sample * self.timesteps[index + 1]


def main() -> int:
    module, inputs = PreviousTimestep(), (torch.randn(1, 16, 2), torch.tensor(50))
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
