"""How much torch.fx's ``propose_partitions`` work and CPU time depend on the order of graph nodes.

torch.fx nodes hash by ``id()``, so the sets ``propose_partitions`` walks iterate in heap order: a
property of the process, not of the code. This module measures one ``partition`` of ``Blocks(n)``
under several node orders, each in a process of its own, counted (Python events per phase,
:mod:`vkbench.workloads.partition_work`) and timed (CPU seconds per phase) in two separate
partitions under that same order:

* ``first-hash K``: nodes numbered in the order the process first hashes them, after ``K``
  unrelated nodes were hashed (the numbering the counted track used before it numbered nodes by
  position): forked from one parent that imported torch and ExecuTorch once, so each order costs
  only its partitions;
* ``address I``: the real ``id()`` hash in a fresh interpreter with address randomization on
  (``I`` only tells the runs apart);
* ``position``: a node's position in its own graph (:func:`~vkbench.workloads.partition_work.
  canonical_node_hashes`), what the gated count uses now; one order, whatever ran before.

With ``jobs`` above 1 the orders run side by side, each in a fresh interpreter that first imports
what the forking parent would have (:func:`_prepared`), so a first-hash order numbers the same nodes
as its fork would: for a machine with many cores (200 blocks under 17 orders).

``vkbench history node-orders`` runs it and stores :data:`PATH`; docs/suite.md has the table.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from vkbench.paths import RESULTS_ROOT

#: Where ``vkbench history node-orders`` stores its measurement.
PATH = RESULTS_ROOT / "history" / "node-orders.json"
#: Unrelated nodes hashed before the count, one order each (0 is the plain first-hash order).
OFFSETS = (0, 1, 3, 7, 13, 29, 52, 101)
PHASE = "propose_partitions"


@dataclass
class OrderRun:
    """One order of one size: the counted partition's events and the timed one's CPU seconds."""

    blocks: int
    order: str  #: ``first-hash 3``, ``address 2``, ``position``
    events: dict[str, int]  #: per phase, and ``total``
    cpu_seconds: dict[str, float]  #: per phase, and ``total``
    partitions: int


@dataclass
class OrderSpread:
    """Every run of one size, and the spread of ``propose_partitions`` across them."""

    blocks: int
    runs: list[OrderRun] = field(default_factory=list)
    environment: str = ""  #: where it was measured (:func:`environment`): sizes may come from other machines

    def spread(self, kind: str, values: Callable[[OrderRun], float]) -> dict[str, float]:
        """min, median, max and (max - min) / median of ``values`` over the runs whose order is ``kind``."""
        xs = [values(run) for run in self.runs if run.order.split()[0] == kind]
        if not xs:
            return {}
        median = statistics.median(xs)
        return {"n": len(xs), "min": min(xs), "median": median, "max": max(xs),
                "range_pct": round(100 * (max(xs) - min(xs)) / median, 1) if median else 0.0}


def _unrelated_nodes(count: int) -> None:
    """Hash ``count`` nodes of a graph that has nothing to do with the partition."""
    import torch.fx

    graph = torch.fx.Graph()
    for index in range(count):
        hash(graph.placeholder(f"unrelated_{index}"))


def _one_partition(blocks: int, counted: bool) -> tuple[int, dict[str, float]]:
    from vkbench.core.lowering import timed_partition
    from vkbench.core.phases import PhaseClock
    from vkbench.workloads.partition_work import EventCounter
    from vkbench.workloads.scaling import blocks_edge_program

    program = blocks_edge_program(blocks)
    if not counted:
        return timed_partition(program, clock=PhaseClock(clock=time.process_time))
    counter = EventCounter()
    return counter.counting(lambda: timed_partition(program, clock=PhaseClock(clock=counter.read)))


def _measure_here(blocks: int, order: str, counted: bool) -> dict[str, Any]:
    """In a process of its own: install ``order``'s node hash, then partition once."""
    from vkbench.workloads import partition_work

    kind, _, value = order.partition(" ")
    if kind == "first-hash":
        partition_work.first_hash_order_hashes()
        _unrelated_nodes(int(value))
    elif kind == "position":
        partition_work.canonical_node_hashes()
        _unrelated_nodes(3)
    partitions, phases = _one_partition(blocks, counted)
    return {"partitions": partitions, "phases": phases}


def _forked(blocks: int, order: str, counted: bool) -> dict[str, Any]:
    """:func:`_measure_here` in a fork of this process (imports shared, nodes of its own)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: measure, write one JSON document, leave without cleanup
        os.close(read)
        code = 0
        try:
            payload = json.dumps(_measure_here(blocks, order, counted)).encode()
        except BaseException as error:  # noqa: BLE001 - reported by the parent
            payload, code = json.dumps({"error": f"{type(error).__name__}: {error}"}).encode(), 1
        with os.fdopen(write, "wb") as out:
            out.write(payload)
        os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as source:
        data = json.loads(source.read() or b'{"error": "no output"}')
    os.waitpid(pid, 0)
    if "error" in data:
        raise RuntimeError(f"Blocks({blocks}) under {order}: {data['error']}")
    return data


def _prepared(blocks: int, order: str, counted: bool) -> dict[str, Any]:
    """:func:`_measure_here` after the imports :func:`measure` makes before it forks (torch on one
    thread, the Blocks workload), so a fresh interpreter numbers nodes as a fork would."""
    from vkbench.workloads import partition_work

    partition_work.prepare_this_process()
    import vkbench.workloads.scaling  # noqa: F401 - what the forking parent imported

    return _measure_here(blocks, order, counted)


def _fresh(blocks: int, order: str, counted: bool, prepared: bool = False) -> dict[str, Any]:
    """:func:`_measure_here` (or :func:`_prepared`) in a fresh interpreter (its own heap layout)."""
    from vkbench.workloads.partition_work import CHILD_ENV, TIMEOUT_S

    entry = "_prepared" if prepared else "_measure_here"
    code = ("import json, sys, logging; logging.disable(logging.INFO); "
            f"from vkbench.workloads.node_orders import {entry}; "
            f"print(json.dumps({entry}(int(sys.argv[1]), sys.argv[2], sys.argv[3] == 'count')))")
    done = subprocess.run([sys.executable, "-c", code, str(blocks), order, "count" if counted else "time"],
                          capture_output=True, text=True, env={**os.environ, **CHILD_ENV},
                          timeout=TIMEOUT_S, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = [line for line in done.stderr.splitlines() if line.strip()]
        raise RuntimeError(f"Blocks({blocks}) under {order}: {tail[-1] if tail else 'no output'}")
    return json.loads(lines[-1])


def _run(blocks: int, order: str, counted: bool, fork: bool) -> dict[str, Any]:
    """One partition of ``blocks`` under ``order``: first-hash orders forked when ``fork``."""
    if order.startswith("first-hash"):
        return _forked(blocks, order, counted) if fork else _fresh(blocks, order, counted, prepared=True)
    return _fresh(blocks, order, counted)


def measure(sizes: tuple[int, ...], offsets: tuple[int, ...] = OFFSETS, address_runs: int = 8,
            progress: Callable[[str], None] | None = None,
            done: Callable[[OrderSpread], None] | None = None, jobs: int = 1) -> list[OrderSpread]:
    """Each size under every first-hash offset, ``address_runs`` fresh address layouts and the
    position order; counted and timed; ``done`` is told each size as it ends. Call from a process
    that has built no fx node yet. ``jobs`` partitions run at once (1: one after another, first-hash
    orders forked from this process)."""
    import logging

    from vkbench.workloads import partition_work

    logging.disable(logging.INFO)
    if jobs == 1:
        partition_work.prepare_this_process()  # imports torch (one thread, no tqdm monitor) for the forks
        import vkbench.workloads.scaling  # noqa: F401 - imported once, before the forks

    orders = [f"first-hash {k}" for k in offsets] + [f"address {i}" for i in range(address_runs)]
    orders.append("position")
    note = environment()
    spreads = []
    for blocks in sizes:
        tasks = [(order, counted) for order in orders for counted in (True, False)]

        def one(task: tuple[str, bool], blocks: int = blocks) -> dict[str, Any]:
            if progress:
                progress(f"Blocks({blocks}) {task[0]} {'counted' if task[1] else 'timed'}")
            return _run(blocks, task[0], task[1], fork=jobs == 1)

        with ThreadPoolExecutor(max_workers=jobs) as pool:  # threads only wait on child processes
            measured = dict(zip(tasks, pool.map(one, tasks), strict=True))
        spread = OrderSpread(blocks, environment=note)
        for order in orders:
            counted, timed = measured[(order, True)], measured[(order, False)]
            spread.runs.append(OrderRun(
                blocks, order, {k: int(v) for k, v in counted["phases"].items()},
                {k: round(v, 3) for k, v in timed["phases"].items()}, counted["partitions"]))
        spreads.append(spread)
        if done:
            done(spread)
    return spreads


def merged(stored: list[OrderSpread], new: OrderSpread) -> list[OrderSpread]:
    """``stored`` with ``new``'s size replaced (or added), sizes in order."""
    return sorted([s for s in stored if s.blocks != new.blocks] + [new], key=lambda s: s.blocks)


def correlation(spread: OrderSpread, kind: str = "first-hash") -> float:
    """Pearson r of ``propose_partitions`` events against its CPU seconds over the runs of ``kind``
    (paired: each order's counted and timed partitions saw the same numbering): near 1 when the
    order explains the time's spread."""
    pairs = [(run.events.get(PHASE, 0), run.cpu_seconds.get(PHASE, 0.0))
             for run in spread.runs if run.order.split()[0] == kind]
    if len(pairs) < 3:
        return float("nan")
    return statistics.correlation([p[0] for p in pairs], [p[1] for p in pairs])


def environment() -> str:
    """Python, torch and ExecuTorch of this measurement, and the machine's load when it started."""
    from importlib.metadata import version

    load = os.getloadavg()[0]
    return (f"python {sys.version.split()[0]}, torch {version('torch')}, executorch {version('executorch')}, "
            f"{os.cpu_count()} cores, load {load:.1f} at start")


#: The file's version: 2 says per size where it was measured (version 1 had one ``note`` for the file).
VERSION = 2


def to_json(spreads: list[OrderSpread]) -> dict[str, Any]:
    return {"vkbench_node_orders": VERSION,
            "sizes": [{"blocks": s.blocks, "environment": s.environment, "runs": [asdict(r) for r in s.runs]}
                      for s in spreads]}


def _update_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 -> 2: the file's one ``note`` becomes each size's ``environment``."""
    note = data.get("note", "")
    return {"vkbench_node_orders": 2, "sizes": [{"environment": note, **size} for size in data["sizes"]]}


def from_json(data: dict[str, Any]) -> list[OrderSpread]:
    """The stored spreads, any version read (older ones migrated on the way in)."""
    if data.get("vkbench_node_orders") == 1:
        data = _update_to_2(data)
    if data.get("vkbench_node_orders") != VERSION:
        raise ValueError(f"not a vkbench node-orders file (vkbench_node_orders is not 1 or {VERSION})")
    return [OrderSpread(s["blocks"], [OrderRun(**r) for r in s["runs"]], s.get("environment", ""))
            for s in data["sizes"]]


def summary_rows(spreads: list[OrderSpread]) -> list[list[str]]:
    """Per size and kind of order: ``propose_partitions`` events and CPU seconds, min / median / max."""
    rows = []
    for spread in spreads:
        for kind in ("first-hash", "address", "position"):
            events = spread.spread(kind, lambda run: run.events.get(PHASE, 0))
            cpu = spread.spread(kind, lambda run: run.cpu_seconds.get(PHASE, 0.0))
            total = spread.spread(kind, lambda run: run.cpu_seconds.get("total", 0.0))
            if not events:
                continue
            rows.append([str(spread.blocks), kind, str(events["n"]),
                         f"{events['min']:,.0f} / {events['median']:,.0f} / {events['max']:,.0f}",
                         f"{events['range_pct']} %",
                         f"{cpu['min']:.2f} / {cpu['median']:.2f} / {cpu['max']:.2f}",
                         f"{cpu['range_pct']} %",
                         f"{total['min']:.2f} / {total['median']:.2f} / {total['max']:.2f}",
                         f"{total['range_pct']} %"])
    return rows


SUMMARY_HEADER = ["blocks", "order", "runs", f"{PHASE} events min / median / max", "range",
                  f"{PHASE} CPU s min / median / max", "range", "partition CPU s min / median / max", "range"]
