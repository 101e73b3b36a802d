"""What-if of bug row ``partition_reexports_pattern_graphs``: partitions with the pattern cache working.

ExecuTorch's Vulkan patterns ``rope.py`` and ``rope_hf.py`` mean to build their pattern graphs once
(``@lru_cache``), but the cache sits above ``@register_pattern_graph``, which registers the undecorated
function: every ``VulkanPartitioner.partition`` exports the three pattern graphs again, inside its
``fusable_patterns`` phase. :func:`cache_working` fixes that at run time for a block (each registered
entry's ``get_graphs_fn`` wrapped in one ``functools.cache``; the registry is restored afterwards), and
:func:`measure` partitions ``Blocks(n)`` both ways, each partition on a fresh copy of the size's edge
program through ``timed_partition`` (what asv's ``time_partition`` runs), taking:

* the process CPU seconds of the partition (``time.process_time``, asv's timer);
* the deterministic count: ``torch.export.export`` calls during it (:func:`counting_exports`);
* the wall seconds of its ``fusable_patterns`` phase, and the partitions found.

Each round partitions every size once per side, the sides in alternating order from round to round,
so drift on a shared machine falls on both. The cache is filled once before the rounds (``fill``): a
partition "with the cache working" is any partition after the first in a process (asv's samples, a
survey of many policies); a process that partitions once gains nothing. Both sides must tag the same
nodes (``same_partitions``).

``vkbench pattern-cache`` measures and writes :data:`PATH`; ``--show`` prints the stored table
(``docs/suite.md``). The bug list shows the medians on the row (:func:`row_what_if`).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vkbench.core.versions import public_version
from vkbench.paths import RESULTS_ROOT
from vkbench.suite.documents import read_document, write_document

FORMAT = 1
#: Where ``vkbench pattern-cache`` stores its measurement (relative: ``history/pattern-cache.json``).
PATH = RESULTS_ROOT / "history" / "pattern-cache.json"
SHIPPED, CACHED = "as_shipped", "cache_working"
SIDES = (SHIPPED, CACHED)
SIZES = (50, 100, 200)


@dataclass
class Sample:
    """One partition: CPU seconds, ``torch.export.export`` calls, ``fusable_patterns`` wall seconds."""

    cpu_seconds: float
    exports: int
    fusable_seconds: float
    partitions: int


@dataclass
class SizeResult:
    """Every sample of one ``Blocks(n)`` size, per side, in the order they ran."""

    samples: dict[str, list[Sample]] = field(default_factory=lambda: {side: [] for side in SIDES})
    same_partitions: bool = True

    def cpu(self, side: str) -> list[float]:
        return [sample.cpu_seconds for sample in self.samples[side]]

    def exports(self, side: str) -> list[int]:
        return sorted({sample.exports for sample in self.samples[side]})

    def fusable(self, side: str) -> list[float]:
        return [sample.fusable_seconds for sample in self.samples[side]]


@dataclass
class WhatIf:
    """One run of :func:`measure`: the build, the one-time fill and every size's samples."""

    date: str
    machine: str
    build: dict[str, str]
    rounds: int
    fill: Sample
    sizes: dict[int, SizeResult]
    #: The 1-minute load average when the partitions began and when they ended (a shared machine).
    load: list[float] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"vkbench_pattern_cache": FORMAT, "date": self.date, "machine": self.machine,
                "build": self.build, "rounds": self.rounds, "load": self.load, "fill": asdict(self.fill),
                "sizes": {str(n): {"same_partitions": r.same_partitions,
                                   **{side: [asdict(s) for s in r.samples[side]] for side in SIDES}}
                          for n, r in sorted(self.sizes.items())}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WhatIf:
        if data.get("vkbench_pattern_cache") != FORMAT:
            raise ValueError(f"not a version-{FORMAT} pattern-cache what-if")
        sizes = {int(n): SizeResult({side: [Sample(**s) for s in found[side]] for side in SIDES},
                                    bool(found["same_partitions"])) for n, found in data["sizes"].items()}
        return cls(data["date"], data["machine"], dict(data["build"]), int(data["rounds"]),
                   Sample(**data["fill"]), sizes, [float(x) for x in data.get("load", [])])


def read(path: Path = PATH) -> WhatIf:
    """The stored what-if; ``ValueError`` names the file."""
    return read_document(path, WhatIf.from_json)


def write(found: WhatIf, path: Path = PATH) -> Path:
    return write_document(path, found.to_json())


# -- the run-time fix and the count -------------------------------------------------------------------

def _registry() -> dict[str, Any]:
    from executorch.backends.vulkan.patterns import fusable_patterns

    return fusable_patterns


@contextlib.contextmanager
def cache_working(cached: dict[str, Callable[[], Any]] | None = None) -> Iterator[dict[str, Callable]]:
    """Each registered pattern entry's ``get_graphs_fn`` replaced by a cached one for the block.

    ``cached`` (name -> cached function) carries a filled cache from one block to the next; None makes
    new ones. Yields them; the registry holds its own functions again afterwards."""
    entries = {name: entry for name, entry in _registry().items() if entry.get_graphs_fn is not None}
    originals = {name: entry.get_graphs_fn for name, entry in entries.items()}
    cached = cached if cached is not None else {name: functools.cache(fn) for name, fn in originals.items()}
    try:
        for name, entry in entries.items():
            entry.get_graphs_fn = cached.get(name, originals[name])
        yield cached
    finally:
        for name, entry in entries.items():
            entry.get_graphs_fn = originals[name]


def _pattern_modules() -> list[Any]:
    """The modules of the registered pattern graph functions (a cached one's wrapped function's)."""
    found = []
    for entry in _registry().values():
        fn = getattr(entry.get_graphs_fn, "__wrapped__", entry.get_graphs_fn)
        module = sys.modules.get(getattr(fn, "__module__", "") or "")
        if module is not None and module not in found:
            found.append(module)
    return found


@contextlib.contextmanager
def counting_exports() -> Iterator[list[int]]:
    """Count ``torch.export.export`` calls in the block: ``[n]``, read after it ends.

    The pattern modules call the name they imported (``from torch.export import export``), so theirs
    is replaced too, and restored afterwards."""
    import torch.export

    real = torch.export.export
    count = [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return real(*args, **kwargs)

    owners = [torch.export, *(m for m in _pattern_modules() if getattr(m, "export", None) is real)]
    try:
        for owner in owners:
            owner.export = counted
        yield count
    finally:
        for owner in owners:
            owner.export = real


# -- measuring ----------------------------------------------------------------------------------------

def _tags(program: Any) -> dict[str, str]:
    return {node.name: str(node.meta.get("delegation_tag", "")) for node in program.graph.nodes}


def _partition(program: Any) -> tuple[Sample, dict[str, str]]:
    from vkbench.core.lowering import timed_partition

    fresh = copy.deepcopy(program)
    with counting_exports() as exports:
        start = time.process_time()
        partitions, phases = timed_partition(fresh)
        cpu = time.process_time() - start
    sample = Sample(round(cpu, 4), exports[0], round(phases.get("fusable_patterns", 0.0), 4), partitions)
    return sample, _tags(fresh)


def build() -> dict[str, str]:
    """The versions the measurement ran with."""
    import executorch.version
    import torch

    return {"python": platform.python_version(), "torch": public_version(torch.__version__),
            "executorch": public_version(executorch.version.__version__),
            "executorch_git": getattr(executorch.version, "git_version", "")}


def measure(sizes: tuple[int, ...] = SIZES, rounds: int = 3, machine: str = "",
            say: Callable[[str], None] = lambda line: None) -> WhatIf:
    """Partition each ``Blocks(n)`` ``rounds`` times per side, interleaved; ``say`` gets one line a sample."""
    from vkbench.workloads.scaling import blocks_edge_program

    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    programs = {n: blocks_edge_program(n) for n in sizes}
    with counting_exports() as exports, cache_working() as cached:
        start = time.process_time()
        for fn in cached.values():
            fn()
        fill = Sample(round(time.process_time() - start, 4), exports[0], 0.0, 0)
    say(f"fill the cache: {fill.cpu_seconds:.2f} s CPU, {fill.exports} exports")
    load = [round(os.getloadavg()[0], 2)]
    results = {n: SizeResult() for n in sizes}
    first_tags: dict[int, dict[str, dict[str, str]]] = {n: {} for n in sizes}
    for index in range(rounds):
        order = SIDES if index % 2 == 0 else SIDES[::-1]
        for n in sizes:
            for side in order:
                with cache_working(cached) if side == CACHED else contextlib.nullcontext():
                    sample, tags = _partition(programs[n])
                results[n].samples[side].append(sample)
                first_tags[n].setdefault(side, tags)
                say(f"round {index + 1} Blocks({n}) {side}: {sample.cpu_seconds:.2f} s CPU, "
                    f"{sample.exports} exports, {sample.partitions} partitions")
    for n in sizes:
        results[n].same_partitions = first_tags[n][SHIPPED] == first_tags[n][CACHED] and len(
            {s.partitions for side in SIDES for s in results[n].samples[side]}) == 1
    load.append(round(os.getloadavg()[0], 2))
    date = datetime.now(UTC).strftime("%Y-%m-%dT%H:%MZ")
    return WhatIf(date, machine, build(), rounds, fill, results, load)


# -- reading it ---------------------------------------------------------------------------------------

HEADERS = ["blocks", "exports per partition", "CPU s as shipped (min / median)",
           "CPU s cache working (min / median)", "saved per partition (median)",
           "fusable_patterns wall s (median)", "same partitions"]


def _exports(values: list[int]) -> str:
    return "/".join(map(str, values))


def table(found: WhatIf) -> list[list[str]]:
    """One row per size (:data:`HEADERS`)."""
    rows = []
    for n, result in sorted(found.sizes.items()):
        shipped, cached = result.cpu(SHIPPED), result.cpu(CACHED)
        saved = statistics.median(shipped) - statistics.median(cached)
        rows.append([str(n), f"{_exports(result.exports(SHIPPED))} → {_exports(result.exports(CACHED))}",
                     f"{min(shipped):.2f} / {statistics.median(shipped):.2f}",
                     f"{min(cached):.2f} / {statistics.median(cached):.2f}",
                     f"{saved:.2f} ({100 * saved / statistics.median(shipped):.0f} %)",
                     f"{statistics.median(result.fusable(SHIPPED)):.3f} → "
                     f"{statistics.median(result.fusable(CACHED)):.3f}",
                     "yes" if result.same_partitions else "NO"])
    return rows


def caption(found: WhatIf) -> str:
    """Where and how it was measured, in one line."""
    b = found.build
    return (f"{found.machine}, {found.date}: torch {b.get('torch')}, executorch {b.get('executorch')}, "
            f"{found.rounds} rounds a side, interleaved; the cache filled once first "
            f"({found.fill.cpu_seconds:.2f} s CPU, {found.fill.exports} exports)"
            + (f"; load average {' → '.join(map(str, found.load))}" if found.load else ""))


def row_what_if(path: Path) -> list[dict[str, Any]]:
    """What the bug row shows per size: exports and median CPU seconds per side ([] when not stored)."""
    if not Path(path).is_file():
        return []
    found = read(path)
    return [{"blocks": n, "rounds": found.rounds, "same_partitions": result.same_partitions,
             **{f"exports_{side}": result.exports(side) for side in SIDES},
             **{f"cpu_seconds_{side}": round(statistics.median(result.cpu(side)), 3) for side in SIDES}}
            for n, result in sorted(found.sizes.items())]
