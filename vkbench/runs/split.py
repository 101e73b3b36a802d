"""One ``asv run`` split over several asv processes side by side, merged into the usual result files.

asv runs a commit's benchmarks one after another in one process, and a tier's cost is mostly a few
``setup_cache`` lowerings that each keep one core busy: the gate alone on the 2-core machine took
459 s for one commit (the probes' and the fast policies' lowerings 137 s and 158 s of it) while the
other core idled. ``vkbench upstream --split N -- run ...`` deals the alternatives of the tier's
``-b`` pattern to N asv processes, heaviest first onto the lightest (their seconds in the newest
commit's result file that holds them), runs the processes at once, each with its own environments and its
own results folder (asv loads a commit's file before its benchmarks and writes it after, so two
processes on one folder would drop each other's rows), then merges their files, sidecars and
``benchmarks.json`` into the results folder. :mod:`vkbench.results.cost` reads the overlapping
times back as processes side by side.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from vkbench.results import sidecar
from vkbench.results.asv_files import (
    read_dir,
    read_file,
    read_listing,
    result_paths,
    write_file,
    write_listing,
)
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


def units(pattern: str, names: Sequence[str]) -> list[str]:
    """``pattern``'s alternatives, those that select points of one benchmark joined into one (asv
    writes a benchmark's whole row, so two processes must never share one). ``names``: the points as
    asv matches ``-b`` against them (``bench.Class.track(param, ...)``)."""
    groups: list[tuple[list[str], set[str]]] = []  # alternatives, the benchmarks they select
    for alternative in alternatives(pattern):
        hits = {name.split("(", 1)[0] for name in names if re.search(alternative, name)}
        joined = [group for group in groups if group[1] & hits]
        for group in joined:
            groups.remove(group)
        groups.append(([a for g in joined for a in g[0]] + [alternative],
                       hits.union(*(g[1] for g in joined))))
    return ["|".join(group) for group, _ in groups]


def deal(pattern: str, processes: int, seconds: Mapping[str, float],
         names: Sequence[str] = ()) -> list[str]:
    """``pattern``'s alternatives (:func:`units` of them) dealt to at most ``processes`` patterns, each,
    heaviest first (``seconds`` of its alternatives; unknown ones count 1 s), to the process with
    the fewest seconds so far."""
    if processes < 1:
        raise ValueError(f"--split needs at least 1 process, got {processes}")

    def weight(unit: str) -> float:
        return sum(seconds.get(a, 1.0) for a in alternatives(unit))

    loads: list[tuple[float, list[str]]] = [(0.0, []) for _ in range(processes)]
    for unit in sorted(units(pattern, names), key=lambda u: -weight(u)):
        index = min(range(processes), key=lambda i: loads[i][0])
        total, dealt = loads[index]
        loads[index] = (total + weight(unit), [*dealt, unit])
    return ["|".join(dealt) for _, dealt in loads if dealt]


def point_names(results: Path) -> list[str]:
    """Every point of the suite as asv matches ``-b`` against it, from ``benchmarks.json``."""
    listing = read_listing(results)
    return [quoted for name, meta in listing.items() if isinstance(meta, dict) and "params" in meta
            for quoted in BenchmarkResult(name, meta["params"], []).quoted_names()]


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


def merge_results(parts: Sequence[Path], into: Path) -> list[Path]:
    """Merge the processes' results folders into ``into``: the rows each wrote (absent from ``into``
    before the merge, or started at another time: the folders were seeded with ``into``'s files, so
    asv kept their other points), the durations, the sidecar entries of those rows,
    ``benchmarks.json`` and a missing ``machine.json``. Returns the files written."""
    before = {path: {name: row.started_at for name, row in read_file(path).results.items()}
              for path in result_paths(into)}
    written: set[Path] = set()
    for part in parts:
        for path in result_paths(part):
            target = into / path.relative_to(part)
            target.parent.mkdir(parents=True, exist_ok=True)
            machine_file = path.parent / "machine.json"
            if machine_file.is_file() and not (target.parent / "machine.json").exists():
                shutil.copy2(machine_file, target.parent / "machine.json")
            seeded = before.get(target, {})
            rows = {name for name, row in read_file(path).results.items()
                    if name not in seeded or seeded[name] != row.started_at}
            if rows:
                _merge_file(path, target, rows)
                _merge_sidecar(path, target, rows)
                written.add(target)
        write_listing(into, {**read_listing(into), **read_listing(part)})
    return sorted(written)


def _merge_file(path: Path, target: Path, rows: set[str]) -> None:
    """Write the ``rows`` of ``path`` into ``target`` (a copy of ``path`` where there is none)."""
    new = read_file(path)
    if not target.exists():
        write_file(new, target)
        return
    old = read_file(target)
    pairs = (("commit", old.commit, new.commit), ("env_name", old.env_name, new.env_name),
             ("columns", old.columns, new.columns))
    differ = [what for what, mine, theirs in pairs if mine != theirs]
    if differ:
        raise ValueError(f"{path} and {target} differ in {', '.join(differ)}: not one commit's results")
    old.results.update({name: new.results[name] for name in rows})
    build = max(old.durations.get("<build>", 0.0), new.durations.get("<build>", 0.0))
    old.durations.update(new.durations)
    if build:
        old.durations["<build>"] = build  # the processes built side by side: the longer one
    write_file(old, target)


def _merge_sidecar(path: Path, target: Path, rows: set[str]) -> None:
    if not sidecar.path_for(path).is_file():
        return
    part = sidecar.read(path)
    failures = [(name, list(params), failure) for (name, params), failure in part.failures.items()
                if name in rows]
    cpu = {(module, workload): ops for module, found in part.cpu.items() for workload, ops in found.items()}
    patterns = {name: pattern for name, pattern in part.patterns.items() if name in rows}
    sidecar.merge(target, part.provenance, failures, part.inputs, patterns, cpu, part.suite_reads)


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


def part_config(config: Path, index: int, state_dir: Path, seed: Path | None = None,
                machine: str | None = None) -> tuple[Path, Path]:
    """``(config, results folder)`` of process ``index``: the run's asv config with its own results
    folder and environments. The folder starts as a copy of ``seed``'s files of ``machine`` (results
    and sidecars), so asv keeps the points a benchmark's earlier runs recorded, as it does in place."""
    data = json.loads(config.read_text())
    results = state_dir / f"split-{index}" / "results"
    if results.exists():
        shutil.rmtree(results)
    results.mkdir(parents=True)
    if seed is not None and machine is not None and (seed / machine).is_dir():
        shutil.copytree(seed / machine, results / machine)
    data["results_dir"] = str(results)
    if index:  # the first process keeps the run's environments
        data["env_dir"] = f"{data.get('env_dir', '.asv/env')}-split-{index}"
    path = state_dir / f"split-{index}" / config.name
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path, results


__all__ = ["alternatives", "deal", "measured_seconds", "merge_results", "part_config", "point_names",
           "selected", "units", "with_bench"]
