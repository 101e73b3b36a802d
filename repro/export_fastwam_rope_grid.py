"""FastWAM's 3-axis RoPE slices its frequency tables by grid sizes read from a tensor.

Row: export_fastwam_rope_grid (owner: LeRobot model code; no probe: ExecuTorch is not involved).
Blocks: fastwam/video_prefill (fastwam/video_prefill_real_rope reads the grid from the latents' shape and
lowers).
Where: lerobot ``fastwam/wan/model.py`` ``rope_apply`` (``for f, h, w in grid_sizes.tolist():
freqs[0][:f].view(f, 1, 1, -1).expand(f, h, w, -1)``)
Needs: torch 2.11.0 (torch.export only).
Expected: GuardOnDataDependentSymNode: Could not guard on data-dependent expression
Exit status 0: the failure reproduced; 1: it exported.
"""

import sys

import torch


class RopeGrid(torch.nn.Module):
    """``rope_apply`` for one sample, as lerobot writes it (x: batch, tokens, heads, head dim)."""

    def __init__(self) -> None:
        super().__init__()
        angles = torch.outer(torch.arange(64.0), torch.ones(32, dtype=torch.float64))
        self.register_buffer("freqs", torch.polar(torch.ones_like(angles), angles))

    def forward(self, x: torch.Tensor, grid_sizes: torch.Tensor) -> torch.Tensor:
        n, c = x.size(2), x.size(3) // 2
        freqs = self.freqs.split([c - 2 * (c // 3), c // 3, c // 3], dim=1)
        f, h, w = grid_sizes.tolist()[0]
        seq_len = f * h * w
        x_i = torch.view_as_complex(x[0, :seq_len].to(torch.float64).reshape(seq_len, n, -1, 2))
        table = torch.cat([freqs[0][:f].view(f, 1, 1, -1).expand(f, h, w, -1),
                           freqs[1][:h].view(1, h, 1, -1).expand(f, h, w, -1),
                           freqs[2][:w].view(1, 1, w, -1).expand(f, h, w, -1)], dim=-1)
        return torch.view_as_real(x_i * table.reshape(seq_len, 1, -1)).flatten(2).float()


def main() -> int:
    module, inputs = RopeGrid(), (torch.randn(1, 98, 2, 64), torch.tensor([[1, 7, 14]]))
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
