"""ExecuTorch's own delegation counts of every program lowered meanwhile, taken directly (tests).

The tests of issue 30 item 8 check the counts a record stores against this direct call, made on the
edge program as it leaves ``to_edge_transform_and_lower``, not through vkbench's helper: a record
that counted another graph (the exported program, a copy) would differ.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest


@contextlib.contextmanager
def direct_delegation_info() -> Iterator[list[tuple[int, int]]]:
    """``(num_delegated_nodes, num_non_delegated_nodes)`` of every program lowered in the block."""
    import executorch.exir as exir
    from executorch.devtools.backend_debug import get_delegation_info

    original = exir.to_edge_transform_and_lower
    seen: list[tuple[int, int]] = []

    def observed(*args: Any, **kwargs: Any) -> Any:
        edge = original(*args, **kwargs)
        info = get_delegation_info(edge.exported_program().graph_module)
        seen.append((info.num_delegated_nodes, info.num_non_delegated_nodes))
        return edge

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(exir, "to_edge_transform_and_lower", observed)
        yield seen
