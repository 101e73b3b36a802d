"""What the suite costs per commit and tier, read from asv's own result files.

The harness measures itself: for every recorded commit (any machine's
results, any results directory) and the tier it was recorded with (the
largest tier whose benchmarks the file holds), it reports

* **wall**: seconds asv spent on the commit's build and the tier's
  benchmarks: their ``duration`` plus the ``setup_cache`` durations they
  used (asv's start-up, environment install and suite discovery are not in
  the files);
* **unique work**: the seconds of work each number needed once: every
  record's ``track_work_seconds`` (one lowering or partition of a workload;
  where two classes of a module record the same workload, e.g. the gate's
  partition-only pass and the standard tier's full lowering of one policy,
  only the larger counts) plus the samples of every ``time_`` benchmark;
* their ratio (**efficiency**): 1.0 means no work repeated and no overhead.

A ``time_`` benchmark whose parameters span tiers (``time_partition`` 400 is
not in the gate) has its duration split by the sampled time of each
parameter, since asv stores one duration per benchmark.

The suite grows while old results stay: a benchmark that no file in the
results directory holds yet (added to the suite since) does not make a file's
tier incomplete; one that some file holds, and this one lacks, still does
(asv's files do not say whether the suite had it when this one was recorded).
A larger tier is a file's tier only when it holds more benchmarks than the
smaller one, so excused gaps alone never promote a file.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vkbench import tables
from vkbench.tiers import TARGET_MINUTES, TIERS

WORK_TRACK = "track_work_seconds"


@dataclass
class TierCost:
    """One commit x tier."""

    machine: str
    commit: str
    tier: str
    benchmarks: int
    wall_s: float
    work_s: float
    target_min: float | None

    @property
    def efficiency(self) -> float:
        return self.work_s / self.wall_s if self.wall_s else 0.0

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "efficiency": round(self.efficiency, 3)}


def _combos(params: list[list[str]]) -> list[str]:
    return [", ".join(combo) for combo in itertools.product(*params)] if params else [""]


def _number(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not math.isnan(value) else None


def _selected(name: str, params: list[list[str]], pattern: str) -> list[int]:
    """Indices of the parameter combinations of ``name`` that the tier's ``-b`` pattern selects."""
    if not params:
        return [0] if re.search(pattern, name) else []
    return [i for i, combo in enumerate(_combos(params)) if re.search(pattern, f"{name}({combo})")]


def _sampled_seconds(entry: dict[str, Any]) -> list[float]:
    """Per parameter: seconds spent inside the samples of a ``time_`` benchmark."""
    results = entry.get("result") or []
    repeats = entry.get("stats_repeat") or [1] * len(results)
    numbers = entry.get("stats_number") or [1] * len(results)
    return [
        (_number(value) or 0.0) * (_number(r) or 0) * (_number(n) or 0)
        for value, r, n in zip(results, repeats, numbers, strict=False)
    ]


def _used_cache(duration_key: str, used: set[str], known: set[str]) -> bool:
    """Whether ``<setup_cache bench_x:LINE>`` is one of the ``used`` caches.

    A key names the line of its ``setup_cache``; when the suite's source moved
    since the file was recorded, a key no current benchmark has counts for the
    used cache of its module. ``known``: every ``setup_cache_key`` of the current suite.
    """
    if not (duration_key.startswith("<setup_cache ") and duration_key.endswith(">")):
        return False
    key = duration_key[len("<setup_cache "):-1]
    if key in used:
        return True
    return key not in known and key.split(":")[0] in {u.split(":")[0] for u in used}


def tier_cost(data: dict[str, Any], benchmarks: dict[str, Any], tier: str, machine: str,
              unrecorded: frozenset[str] = frozenset()) -> TierCost | None:
    """The tier's cost in one result file, or ``None`` when the file lacks some of its benchmarks.

    ``unrecorded``: benchmarks no file of the results directory holds yet; lacking them is no gap.
    """
    pattern = TIERS[tier]
    columns = data["result_columns"]
    wall = work = 0.0
    caches: set[str] = set()
    records: dict[tuple[str, str], float] = {}
    count = 0
    for name, meta in benchmarks.items():
        if not isinstance(meta, dict) or "params" not in meta:
            continue
        entry = dict(zip(columns, data["results"].get(name, []), strict=False))
        params = entry.get("params") or meta["params"]  # the grid the file was recorded with
        chosen = _selected(name, params, pattern)
        if not chosen:
            continue
        if name not in data["results"]:
            if name in unrecorded:
                continue
            return None  # the tier was not (fully) recorded for this commit
        count += 1
        results = entry.get("result") or []
        share = len(chosen) / max(1, len(results))
        if meta["type"] == "time":
            sampled = _sampled_seconds(entry)
            work += sum(sampled[i] for i in chosen if i < len(sampled))
            total = sum(sampled)
            share = sum(sampled[i] for i in chosen if i < len(sampled)) / total if total else share
        wall += (entry.get("duration") or 0.0) * share
        if meta.get("setup_cache_key"):
            caches.add(meta["setup_cache_key"])
        if name.endswith("." + WORK_TRACK):
            module = name.split(".", 1)[0]
            combos = _combos(params)
            for i in chosen:
                value = _number(results[i]) if i < len(results) else None
                if value is not None:
                    key = (module, combos[i].split(", ")[0])
                    records[key] = max(records.get(key, 0.0), value)
    if not count:
        return None
    durations = data.get("durations", {})
    known = {meta["setup_cache_key"] for meta in benchmarks.values()
             if isinstance(meta, dict) and meta.get("setup_cache_key")}
    wall += sum(v for k, v in durations.items() if _used_cache(k, caches, known))
    wall += durations.get("<build>", 0.0)  # building the commit (aot: seconds) is part of its cost
    work += sum(records.values())
    return TierCost(machine, data["commit_hash"], tier, count, round(wall, 1), round(work, 1),
                    TARGET_MINUTES.get(tier))


def costs(results_dir: Path, tiers: list[str] | None = None) -> list[TierCost]:
    """Per result file (machine x commit): the cost of the tier it was recorded with.

    That is the largest tier (of those with targets) whose benchmarks the
    file fully holds: the run that produced it. A smaller tier is never read
    out of a larger run, where its records may have been made (and paid for)
    by benchmarks of the larger tier. ``tiers`` keeps only files recorded as
    one of them.
    """
    benchmarks = json.loads((results_dir / "benchmarks.json").read_text())
    files = {path: json.loads(path.read_text()) for path in sorted(results_dir.glob("*/*.json"))
             if path.name != "machine.json"}
    recorded = {name for data in files.values() for name in data["results"]}
    unrecorded = frozenset(name for name in benchmarks if name not in recorded)
    rows = []
    for path, data in files.items():
        held: list[TierCost] = []
        for tier in TARGET_MINUTES:  # a larger tier must hold more than the smaller one, not only excuses
            cost = tier_cost(data, benchmarks, tier, path.parent.name, unrecorded)
            if cost is not None and (not held or cost.benchmarks > held[-1].benchmarks):
                held.append(cost)
        if held and (not tiers or held[-1].tier in tiers):
            rows.append(held[-1])
    return rows


def render(rows: list[TierCost], markdown: bool = False) -> str:
    headers = ["machine", "commit", "tier", "benchmarks", "wall min", "unique work min", "efficiency",
               "target min"]
    cells = [[r.machine, r.commit[:8], r.tier, r.benchmarks, f"{r.wall_s / 60:.1f}", f"{r.work_s / 60:.1f}",
              f"{r.efficiency:.2f}", "-" if r.target_min is None else
              f"{r.target_min:g} ({'met' if r.wall_s <= r.target_min * 60 else 'MISSED'})"] for r in rows]
    return (tables.markdown if markdown else tables.render)(headers, cells)
