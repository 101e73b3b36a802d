"""The seed's synthetic graphs, sized by one integer.

``Blocks(n)`` grows the partitioner's work: every block leaves an ``elu``
side branch on the CPU, so the graph splits into n+1 Vulkan partitions and
the fx partitioner's merge/cycle checks grow super-linearly. ``Many(n)`` is
a straight chain of ``2n`` elementwise dispatches, which probes how many
dispatches the Vulkan runtime accepts in one delegate.
"""

from __future__ import annotations

from collections.abc import Callable

import torch


class Blocks(torch.nn.Module):
    """n x Linear(32, 32), each followed by ``a*sigmoid(a) + elu(a)``."""

    width = 32

    def __init__(self, n: int) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(self.width, self.width) for _ in range(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            a = layer(x)
            x = a * torch.sigmoid(a) + torch.nn.functional.elu(a)  # elu stays on the CPU
        return x

    @classmethod
    def example_inputs(cls) -> tuple[torch.Tensor]:
        return (torch.randn(1, cls.width),)


class Many(torch.nn.Module):
    """``x*1.0001 + 0.001`` n times: 2 Vulkan dispatches per step."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(self.n):
            x = x * 1.0001 + 0.001
        return x

    @staticmethod
    def example_inputs() -> tuple[torch.Tensor]:
        return (torch.randn(1, 64),)


class Fn(torch.nn.Module):
    """Wrap a tensor function as a module (for single-op probes)."""

    def __init__(self, fn: Callable[..., torch.Tensor]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        return self.fn(*args)


def positive_size(value: str | int) -> int:
    """Parse a graph size; non-positive sizes are rejected with ValueError."""
    size = int(value)
    if size <= 0:
        raise ValueError(f"size must be a positive integer, got {value!r}")
    return size
