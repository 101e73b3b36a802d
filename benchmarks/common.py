"""Shared, lazily built inputs for the benchmark modules.

Everything expensive is built on first use and memoised per process, and
every import of the measured stack is guarded: asv imports this suite for
every ExecuTorch commit it measures, and an old commit lacking something must
skip the affected benchmarks (``NotImplementedError``), not break discovery.
"""

from __future__ import annotations

import functools
import logging
import warnings
from typing import Any


def quiet() -> None:
    """Silence the partitioner's INFO lines and torch's deprecation chatter."""
    logging.getLogger().setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)


quiet()

try:
    from vkbench import lowering, probes, scaling
except Exception as error:  # noqa: BLE001 - any failure means "skip", with the reason
    lowering = probes = scaling = None  # type: ignore[assignment]
    IMPORT_ERROR: str | None = f"{type(error).__name__}: {error}"
else:
    IMPORT_ERROR = None

#: Probe names are fixed here, not read from the measured project, so the
#: parameter grid is the same for every commit.
PROBE_NAMES = [
    "linear_f32", "linear_bf16", "conv2d_batch1", "conv2d_batch2", "elu", "mish", "var",
    "conv_transpose1d", "index_put",
]
BLOCK_SIZES = [50, 100, 200, 400]


def require_vkbench() -> None:
    if IMPORT_ERROR is not None:
        raise NotImplementedError(f"vkbench cannot import here: {IMPORT_ERROR}")


def lower_probe(name: str) -> dict[str, Any]:
    """Coverage of one probe as JSON, or ``{"error": ...}`` when lowering fails."""
    require_vkbench()
    return probes.probe_coverage(name)


@functools.cache
def blocks_edge_program(n: int) -> Any:
    require_vkbench()
    quiet()
    return scaling.blocks_edge_program(n)
