"""One ``asv run`` split over several asv processes side by side, merged into the usual result files.

asv runs a commit's benchmarks one after another in one process, and a tier's cost is mostly a few
``setup_cache`` lowerings that each keep one core busy: the gate alone on the 2-core machine took
459 s for one commit (the probes' and the fast policies' lowerings 137 s and 158 s of it) while the
other core idled. ``vkbench upstream --split N -- run ...`` deals the alternatives of the tier's
``-b`` pattern to N asv processes, heaviest first onto the lightest (their seconds in the newest
commit's result file that holds them), runs the processes at once, each with its own environments and
each a recording of its own (:func:`vkbench.results.recording.recording`: its own results folder, since asv
loads a commit's file before its benchmarks and writes it after, so two processes on one folder would drop
each other's rows; its rows and sidecar entries merged into the results folder under the machine
folder's lock as it ends). :mod:`vkbench.results.cost` reads the overlapping times back as processes
side by side.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from vkbench.results.asv_files import read_dir, read_listing
from vkbench.results.cost import pattern_seconds
from vkbench.results.model import BenchmarkResult


def alternatives(pattern: str) -> list[str]:
    """The top-level ``|`` alternatives of a regular expression (groups and classes kept whole)."""
    parts, depth, in_class, escaped, current = [], 0, False, False, ""
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(current)
            current = ""
            continue
        current += char
    return [*parts, current]


def units(pattern: str, names: Sequence[str], caches: Mapping[str, str] | None = None) -> list[str]:
    """``pattern``'s alternatives, those that select points of one benchmark joined into one (asv
    writes a benchmark's whole row, so two processes must never share one), and those whose
    benchmarks share a ``setup_cache`` (``caches``: benchmark -> asv's ``setup_cache_key``; each
    process would make the records of that cache again). ``names``: the points as asv matches ``-b``
    against them (``bench.Class.track(param, ...)``)."""
    caches = caches or {}
    groups: list[tuple[list[str], set[str]]] = []  # alternatives, the benchmarks (and caches) they select
    for alternative in alternatives(pattern):
        hits = {name.split("(", 1)[0] for name in names if re.search(alternative, name)}
        hits |= {f"cache:{caches[hit]}" for hit in list(hits) if caches.get(hit)}
        joined = [group for group in groups if group[1] & hits]
        for group in joined:
            groups.remove(group)
        groups.append(([a for g in joined for a in g[0]] + [alternative],
                       hits.union(*(g[1] for g in joined))))
    return ["|".join(group) for group, _ in groups]


def deal(pattern: str, processes: int, seconds: Mapping[str, float],
         names: Sequence[str] = (), caches: Mapping[str, str] | None = None) -> list[str]:
    """``pattern``'s alternatives (:func:`units` of them) dealt to at most ``processes`` patterns, each,
    heaviest first (``seconds`` of its alternatives; unknown ones count 1 s), to the process with
    the fewest seconds so far."""
    if processes < 1:
        raise ValueError(f"--split needs at least 1 process, got {processes}")

    def weight(unit: str) -> float:
        return sum(seconds.get(a, 1.0) for a in alternatives(unit))

    loads: list[tuple[float, list[str]]] = [(0.0, []) for _ in range(processes)]
    for unit in sorted(units(pattern, names, caches), key=lambda u: -weight(u)):
        index = min(range(processes), key=lambda i: loads[i][0])
        total, dealt = loads[index]
        loads[index] = (total + weight(unit), [*dealt, unit])
    return ["|".join(dealt) for _, dealt in loads if dealt]


def point_names(results: Path) -> list[str]:
    """Every point of the suite as asv matches ``-b`` against it, from ``benchmarks.json``."""
    listing = read_listing(results)
    return [quoted for name, meta in listing.items() if isinstance(meta, dict) and "params" in meta
            for quoted in BenchmarkResult(name, meta["params"], []).quoted_names()]


def cache_keys(results: Path) -> dict[str, str]:
    """``benchmark -> setup_cache_key`` from ``benchmarks.json`` (benchmarks without a cache left out)."""
    listing = read_listing(results)
    return {name: str(meta["setup_cache_key"]) for name, meta in listing.items()
            if isinstance(meta, dict) and meta.get("setup_cache_key")}


def measured_seconds(results: Path, machine: str, pattern: str) -> dict[str, float]:
    """Seconds each alternative of ``pattern`` took in the result file of ``machine``'s newest commit
    that holds it (its benchmarks and the ``setup_cache`` they used); none recorded yet: not there."""
    found = read_dir(results)
    files = sorted((f for f in found.files if f.machine == machine), key=lambda f: f.date, reverse=True)
    seconds = {}
    for alternative in alternatives(pattern):
        for record in files:
            measured = pattern_seconds(record, found.benchmarks, alternative)
            if measured:
                seconds[alternative] = measured
                break
    return seconds


def selected(command: Sequence[str]) -> str:
    """Every ``-b`` pattern of an asv command line as one (asv runs what any of them selects)."""
    found = [command[i + 1] for i, arg in enumerate(command[:-1]) if arg in ("-b", "--bench")]
    found += [arg.split("=", 1)[1] for arg in command if arg.startswith("--bench=")]
    return "|".join(found)


def with_bench(command: Sequence[str], pattern: str) -> list[str]:
    """``command`` (an asv command line) with its ``-b`` patterns replaced by ``pattern``."""
    out, skip = [], False
    for arg in command:
        if skip:
            skip = False
        elif arg in ("-b", "--bench"):
            skip = True
        elif not arg.startswith("--bench="):
            out.append(arg)
    return [*out, "-b", pattern]


def part_settings(config: Path, index: int) -> dict[str, str]:
    """The asv settings process ``index`` changes in the run's config: its own environments (the first
    process keeps the run's)."""
    if not index:
        return {}
    data = json.loads(Path(config).read_text())
    return {"env_dir": f"{data.get('env_dir', '.asv/env')}-split-{index}"}


__all__ = ["alternatives", "deal", "measured_seconds", "part_settings", "point_names", "selected", "units",
           "with_bench"]
