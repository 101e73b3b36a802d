"""Vulkan's serializer writes ``-Infinity`` into the graph JSON, which ``flatc`` cannot parse.

Row: preprocess_flatc_infinity (owner: exir/serialization; probe: mha_cross, whose
``ProbeFailure.track_lowering_failed`` is 1 on main from 8b14fc2c to cff6f4dd and 0 on 1.5.1).
Blocked on those commits: pi0/prefix (checked) and act/model's attention (the probe); the attention
mask's fill value is -inf.
Needs: torch 2.11.0 and executorch 1.5.1 from PyPI (lowering only, no Vulkan runtime).
Fixed in 1.5.1: ``exir/_serialize/_flatbuffer.py`` rewrites non-finite floats before calling flatc
(``_replace_non_finite_in_json``), so on the pinned stack this prints ``no error: lowered``;
``--unfixed`` removes that rewrite to show what the affected commits do.
Expected: no error: lowered
Expected with --unfixed: error: cannot parse value starting with: -

Exit status 0: the pinned stack lowers (fixed) or, with ``--unfixed``, flatc fails as documented.
"""

import subprocess
import sys

import torch
from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.exir import to_edge_transform_and_lower


class CrossAttention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(32, 4)

    def forward(self, query: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        return self.attention(query, memory, memory, need_weights=False)[0]


def main(unfixed: bool) -> int:
    if unfixed:
        from executorch.exir._serialize import _flatbuffer

        _flatbuffer._replace_non_finite_in_json = lambda content: content
    torch.manual_seed(0)
    inputs = (torch.randn(5, 1, 32), torch.randn(7, 1, 32))
    with torch.no_grad():
        program = torch.export.export(CrossAttention().eval(), inputs, strict=False)
    try:
        to_edge_transform_and_lower(program, partitioner=[VulkanPartitioner()]).to_executorch()
    except subprocess.CalledProcessError as error:  # flatc printed its error on stderr above
        print(f"error: {error}", flush=True)
        return 0 if unfixed else 1
    print("no error: lowered")
    return 1 if unfixed else 0


if __name__ == "__main__":
    sys.exit(main("--unfixed" in sys.argv))
