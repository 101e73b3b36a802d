"""A second ``to_edge_transform_and_lower`` of the same ExportedProgram fails on its unbacked symbols.

Row: to_edge_pending_unbacked_retry (owner: exir; no probe: a probe lowers its program once).
Blocks: smolvla/prefix as vkbench records it: after the default config fails on ``aten.bucketize``,
vkbench lowers the same exported program again with the op let through, and that second call fails
here. A fresh export lowers (smolvla/prefix too, with bucketize and empty_permuted on the CPU).
Needs: torch 2.11.0 and executorch 1.5.1 from PyPI (lowering only, no Vulkan runtime).
Expected: PendingUnbackedSymbolNotFound: Pending unbacked symbols

Any graph with a data-dependent size (``nonzero``) shows it; the first call succeeds, the second
fails, a third succeeds again. ``ExportedProgram.run_decompositions`` alone, called three times,
does not fail. Exit status 0: the failure reproduced; 1: every call lowered.
"""

import sys

import torch
from executorch.exir import to_edge_transform_and_lower


class DataDependentSize(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nonzero(x > 0).sum() + x


def main() -> int:
    with torch.no_grad():
        program = torch.export.export(DataDependentSize().eval(), (torch.randn(8),), strict=False)
    reproduced = False
    for call in (1, 2, 3):
        try:
            to_edge_transform_and_lower(program)
            print(f"call {call}: lowered")
        except Exception as error:  # the documented failure, on the second call
            print(f"call {call}: error: {type(error).__name__}: {str(error).strip().splitlines()[0][:160]}")
            reproduced = True
    return 0 if reproduced else 1


if __name__ == "__main__":
    sys.exit(main())
