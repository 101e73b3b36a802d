"""Wall-clock phase accounting by wrapping library functions in place.

The partitioner's time has to be split between torch.fx
(``CapabilityBasedPartitioner.propose_partitions``), ExecuTorch's Vulkan code
(fusable-pattern search, ``is_node_supported``) and ``VulkanBackend.preprocess``
so a regression points at the right project. We cannot add timers inside
those libraries, so we wrap the functions for the duration of one lowering.
Time is *exclusive*: a phase nested in another (``is_node_supported`` runs
inside ``propose_partitions``) is subtracted from its parent.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

#: The partitioner's phases, each clocked as :func:`clock_name` around the code it names (torch.fx's
#: ``propose_partitions``, ExecuTorch's fusable-pattern search, its ``is_node_supported``). Spelled only
#: here: the lowering's patches and report, the counted child, the catalogue's grids and the gate's
#: verdict read this tuple, so a new phase is one entry here and one patch in :mod:`vkbench.core.lowering`.
PARTITIONER_PHASES = ("propose_partitions", "fusable_patterns", "is_node_supported")
PROPOSE, FUSABLE, SUPPORT = PARTITIONER_PHASES


def clock_name(phase: str) -> str:
    """The :class:`PhaseClock` name of partitioner phase ``phase`` (``partition.<phase>``)."""
    return f"partition.{phase}"


@dataclass
class PhaseClock:
    """Exclusive seconds and call counts per named phase.

    ``clock`` is what a phase spends: wall seconds by default, or any other
    monotone reading (:mod:`vkbench.workloads.partition_work` counts Python
    events with it); ``seconds`` then holds that reading's units.
    """

    clock: Callable[[], float] = time.perf_counter
    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    _stack: list[list[float]] = field(default_factory=list)

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time a block as ``name``, excluding nested phases."""
        frame = [self.clock(), 0.0]  # start, time spent in children
        self._stack.append(frame)
        try:
            yield
        finally:
            self._stack.pop()
            elapsed = self.clock() - frame[0]
            self.seconds[name] += elapsed - frame[1]
            self.calls[name] += 1
            if self._stack:
                self._stack[-1][1] += elapsed

    def wrap(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.phase(name):
                return function(*args, **kwargs)

        return timed


@contextlib.contextmanager
def patched(owner: Any, attribute: str, replacement: Callable[[Any], Any]) -> Iterator[bool]:
    """Replace ``owner.attribute`` by ``replacement(original)`` for a block.

    Yields False (and patches nothing) when the attribute does not exist, which
    is what happens on ExecuTorch commits older than the function we time.
    ``classmethod``/``staticmethod`` descriptors are re-wrapped as such.
    """
    if owner is None or not hasattr(owner, attribute):
        yield False
        return
    own = attribute in vars(owner)
    raw = vars(owner)[attribute] if own else getattr(owner, attribute)
    if isinstance(raw, classmethod):
        new: Any = classmethod(replacement(raw.__func__))
    elif isinstance(raw, staticmethod):
        new = staticmethod(replacement(raw.__func__))
    else:
        new = replacement(getattr(owner, attribute))
    setattr(owner, attribute, new)
    try:
        yield True
    finally:
        if own:
            setattr(owner, attribute, raw)
        else:
            delattr(owner, attribute)
