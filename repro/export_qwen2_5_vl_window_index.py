"""Qwen2.5-VL's window attention builds its window index from grid sizes read from a tensor.

Row: export_qwen2_5_vl_window_index (owner: LeRobot model code (transformers' Qwen2.5-VL); no probe:
ExecuTorch is not involved).
Blocks: wall_x/prefix.
Where: transformers ``modeling_qwen2_5_vl.py`` ``get_window_index`` (reshapes ``arange(t*h*w)`` by values of
``grid_thw``, then ``cu_seqlens_tmp.tolist()``)
Needs: torch 2.11.0 (torch.export only).
Expected: GuardOnDataDependentSymNode: Could not guard on data-dependent expression

The per-window lengths' ``tolist()`` needs their count, a product of data-dependent window counts.
Exit status 0: the failure reproduced; 1: it exported.
"""

import sys

import torch


class WindowIndex(torch.nn.Module):
    """``get_window_index`` for one image, as transformers writes it (merge size 2, window 4)."""

    def forward(self, grid_thw: torch.Tensor) -> torch.Tensor:
        t, h, w = grid_thw.tolist()[0]
        llm_h, llm_w, window = h // 2, w // 2, 4
        index = torch.arange(t * llm_h * llm_w).reshape(t, llm_h, llm_w)
        pad_h, pad_w = window - llm_h % window, window - llm_w % window
        windows_h, windows_w = (llm_h + pad_h) // window, (llm_w + pad_w) // window
        padded = torch.nn.functional.pad(index, (0, pad_w, 0, pad_h), "constant", -100)
        padded = padded.reshape(t, windows_h, window, windows_w, window)
        padded = padded.permute(0, 1, 3, 2, 4).reshape(t, windows_h * windows_w, window, window)
        seqlens = (padded != -100).sum([2, 3]).reshape(-1)
        cu_window_seqlens = [0, *(seqlens.cumsum(0) * 4).tolist()]
        padded = padded.reshape(-1)
        return padded[padded != -100] + len(cu_window_seqlens)


def main() -> int:
    module, inputs = WindowIndex(), (torch.tensor([[1, 18, 18]]),)
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
