"""Partitioner work *counted*, not timed: Python events of one ``partition`` of ``Blocks(n)``.

A time track of ``VulkanPartitioner.partition`` cannot gate a small regression
on a shared 2-core machine (its CV across commits is 11-12 %, so ``asv
continuous`` needs ``-f 1.4``). This module counts what the partitioner does
instead, per phase (the :mod:`vkbench.core.phases` split, with the count as its
clock): every Python function start and every jump of Python code
(``sys.monitoring`` ``PY_START`` + ``JUMP``, i.e. calls and loop iterations),
which follows CPU time per phase across ``Blocks`` sizes (docs/suite.md) and
costs 1.2-2x the partition.

A count is only worth gating on if it is exact. Two things made it move between
runs of the same code, and both are removed here:

* torch.fx nodes hash by ``id()``, so the sets torch.fx's ``propose_partitions``
  walks (and leaves early) are ordered by heap addresses, which move with every
  allocation before them (another commit's imports, address randomization, a
  hash seed): the same partition counted 0.3-2.4 % apart. The count runs with
  :func:`canonical_node_hashes` installed before any node exists, so a node's
  hash is its position in its own graph: work done on other graphs before or
  during the count cannot reorder the partitioned graph's sets.
* string hashes follow ``PYTHONHASHSEED`` (the fusable-pattern search walks
  string sets): the child pins it to 0, and torch to one thread.
* ``sys.monitoring`` counts every thread: tqdm's monitor thread woke inside a
  partition that load had stretched and added 47 events. The child starts no
  tqdm monitor, and while any other Python thread is alive only the main
  thread's events count.

So the count runs in a fresh child process of the same interpreter
(:func:`count_partition_work` starts :func:`child`): the hash patch
must be in place before torch.fx builds the graph, and the benchmark process
has built graphs already. Counts depend on the Python version and packages, so
compare them within one asv machine name, as asv does.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

#: The events counted: Python function starts and jumps (loop iterations).
EVENTS_COUNTED = "sys.monitoring PY_START + JUMP"
#: The child's environment: one hash seed and one torch thread, whatever the caller's.
CHILD_ENV = {"PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: The child gives up after this long (400 blocks, never counted by a tier, takes minutes).
TIMEOUT_S = 1800


def unavailable_reason() -> str | None:
    """Why events cannot be counted with this interpreter, or None (``sys.monitoring`` is 3.12+)."""
    if not hasattr(sys, "monitoring"):
        return f"sys.monitoring needs Python 3.12+, this is {sys.version.split()[0]}"
    return None


def canonical_node_hashes() -> None:
    """Hash ``torch.fx.Node`` by its position in its own graph, not by address or global order.

    torch.fx nodes hash by ``id()``, so the sets ``propose_partitions`` walks are ordered by the
    heap. Numbering nodes by the order they were first hashed made a count exact for identical
    code, but not invariant: 3 unrelated nodes hashed first moved ``propose_partitions`` by 20 %
    (docs/suite.md, node orders). A node's position in its own graph when first hashed depends on
    that graph alone, so work done on other graphs (a pattern graph exported, a module traced)
    cannot move the count. A node outside any graph's list hashes by its name.

    Call before any node exists: a dict that stored a node under its old hash would no longer
    find it. Equality stays identity, so every set and dict behaves as before except for its
    iteration order. The hash's own Python events are not counted (:data:`UNCOUNTED`).
    """
    import torch.fx

    def canonical_hash(node: Any) -> int:
        try:
            return node._vkbench_hash
        except AttributeError:
            node._vkbench_hash = value = _position(node)
            return value

    torch.fx.Node.__hash__ = canonical_hash  # type: ignore[method-assign]
    UNCOUNTED.update({id(canonical_hash.__code__), id(_position.__code__)})


def first_hash_order_hashes() -> None:
    """The earlier numbering, for :mod:`vkbench.workloads.node_orders` only: a node's hash is the
    order in which the process first hashed it, so unrelated nodes hashed before move it."""
    import torch.fx

    order = itertools.count()

    def first_hash_order(node: Any) -> int:
        try:
            return node._vkbench_hash
        except AttributeError:
            node._vkbench_hash = value = next(order)
            return value

    torch.fx.Node.__hash__ = first_hash_order  # type: ignore[method-assign]
    UNCOUNTED.add(id(first_hash_order.__code__))


#: ``id()`` of the code whose Python events a count leaves out: the node hash vkbench installs (the real hash,
#: ``id()``, runs no Python code, so counting ours would add work the partitioner never does).
UNCOUNTED: set[Any] = set()


def _position(node: Any) -> int:
    """``node``'s index in its graph's node list (walked from the root), or its name's hash
    when it is in none (an erased node)."""
    graph = getattr(node, "graph", None)
    root = getattr(graph, "_root", None)
    if root is not None:
        index, current = 0, root._next
        while current is not root:
            if current is node:
                return index
            index, current = index + 1, current._next
    return hash(node.name)


class EventCounter:
    """Counts :data:`EVENTS_COUNTED` while :meth:`counting`; :meth:`read` is a phase clock."""

    def __init__(self) -> None:
        self.events = 0
        monitoring = sys.monitoring
        self.tool = next(tool for tool in range(6) if monitoring.get_tool(tool) is None)

    def _tick(self, code: Any, *_: Any) -> Any:
        if id(code) in UNCOUNTED:
            return sys.monitoring.DISABLE  # this location never reports again
        self.events += 1
        return None

    def _tick_main_thread(self, code: Any, *_: Any) -> Any:
        if id(code) in UNCOUNTED:
            return sys.monitoring.DISABLE
        if threading.get_ident() == self._main:
            self.events += 1
        return None

    def read(self) -> float:
        return self.events

    def counting(self, run: Callable[[], Any]) -> Any:
        """``run()`` with the events counted."""
        monitoring = sys.monitoring
        events = monitoring.events.PY_START | monitoring.events.JUMP
        self._main = threading.get_ident()
        tick = self._tick if threading.active_count() == 1 else self._tick_main_thread
        monitoring.use_tool_id(self.tool, "vkbench partition work")
        monitoring.register_callback(self.tool, monitoring.events.PY_START, tick)
        monitoring.register_callback(self.tool, monitoring.events.JUMP, tick)
        monitoring.set_events(self.tool, events)
        try:
            return run()
        finally:
            monitoring.set_events(self.tool, 0)
            monitoring.free_tool_id(self.tool)


def count_in_this_process(blocks: int) -> dict[str, Any]:
    """Build ``Blocks(blocks)`` and count one partition of it; after :func:`prepare_this_process`."""
    from vkbench.core.lowering import pattern_graph_phases, timed_partition
    from vkbench.core.phases import PhaseClock
    from vkbench.workloads.scaling import blocks_edge_program, call_nodes

    program = blocks_edge_program(blocks)
    counter = EventCounter()
    clock = PhaseClock(clock=counter.read)
    partitions, phases = counter.counting(lambda: timed_partition(program, clock=clock))
    patterns = pattern_graph_phases(clock)
    phases["pattern_graphs"] = sum(patterns.values())  # of which, inside fusable_patterns
    return {"blocks": blocks, "nodes": call_nodes(program), "partitions": partitions,
            "events": {phase: int(count) for phase, count in phases.items()},
            # inside fusable_patterns: building each registered pattern's graphs (a new pattern is new here)
            "pattern_graph_events": {name: int(n) for name, n in patterns.items()},
            "counted": EVENTS_COUNTED, "python": sys.version.split()[0],
            "threads": sorted(thread.name for thread in threading.enumerate())}


def prepare_this_process() -> None:
    """Make a fresh process count exactly: node hashes, no tqdm monitor, one torch thread."""
    canonical_node_hashes()
    with contextlib.suppress(ImportError):  # no monitor thread waking up inside the count
        import tqdm

        tqdm.tqdm.monitor_interval = 0
    import torch

    torch.set_num_threads(1)


def count_partition_work(*sizes: int, python: str = sys.executable) -> dict[int, dict[str, Any]]:
    """:func:`count_in_this_process` of each size, in one fresh child of ``python`` (one import).

    Returns ``{blocks: {"events": {phase: n}, ...}}``. ``RuntimeError`` carries the
    child's last error line when it fails.
    """
    env = {**os.environ, **CHILD_ENV}
    command = [python, "-c", f"import sys; from {__name__} import child; sys.exit(child(sys.argv[1:]))"]
    done = subprocess.run([*command, *map(str, sizes)], capture_output=True, text=True,
                          env=env, timeout=TIMEOUT_S, check=False)
    records = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or len(records) != len(sizes):
        error = [line for line in done.stderr.splitlines() if line.strip()]
        raise RuntimeError(f"counting Blocks{sizes} failed (exit {done.returncode}): "
                           f"{error[-1] if error else 'no output'}")
    return {record["blocks"]: record for record in records}


def child(args: list[str]) -> int:
    """The child :func:`count_partition_work` starts: one JSON line per size in ``args``, its count."""
    if not args or not all(arg.isdigit() for arg in args):
        print("partition_work.child: sizes must be whole numbers of blocks", file=sys.stderr)
        return 2
    reason = unavailable_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 1
    import logging

    logging.disable(logging.INFO)
    prepare_this_process()
    for blocks in map(int, args):
        print(json.dumps(count_in_this_process(blocks)), flush=True)
    return 0
