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
* their ratio (**efficiency**): 1.0 means no work repeated and no overhead (processes side by side
  can pass 1).

A ``time_`` benchmark whose parameters span tiers (``time_partition`` 400 is
not in the gate) has its duration split by the sampled time of each
parameter, since asv stores one duration per benchmark.

A run split over asv processes side by side (``vkbench upstream --split N``,
:mod:`vkbench.runs.benchmark_split`) costs its longest process, not their sum. One asv
process runs benchmarks one after another, so benchmarks whose times overlap
(``started_at`` + ``duration``) ran in different processes: the file's
benchmarks are dealt to as few processes as their times allow, and the wall is
the longest process's (its benchmarks and the ``setup_cache`` they used). A file
written by one process, or by runs at different times, is one process: the sum.

A file recorded while another recording of the same machine ran (two lanes, one per core) took
longer than it would alone: a row whose benchmarks overlap another file's
in time names those commits (``beside``), and a target it misses that way is "missed beside N runs",
not a MISSED, since the run alone was not measured.

Since tiers are stored beside the results, a file's tier is the one it was
recorded under. For files recorded before that, the tier is inferred: the
suite grows while old results stay: a benchmark that no file in the
results directory holds yet (added to the suite since) does not make a file's
tier incomplete; one that some file holds, and this one lacks, still does
(asv's files do not say whether the suite had it when this one was recorded).
A larger tier is a file's tier only when it holds more benchmarks than the
smaller one, so excused gaps alone never promote a file.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vkbench import tables
from vkbench.results.asv_files import read_dir
from vkbench.results.model import BenchmarkResult, ResultFile, ResultSet
from vkbench.suite.tiers import TARGET_MINUTES, TIERS

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
    #: Commits of the same machine whose recordings ran while this one did (their benchmarks overlap).
    beside: list[str] = field(default_factory=list)

    @property
    def efficiency(self) -> float:
        return self.work_s / self.wall_s if self.wall_s else 0.0

    @property
    def verdict(self) -> str:
        """``met``, ``MISSED`` (alone) or ``missed beside N runs`` ("" without a target)."""
        if self.target_min is None:
            return ""
        if self.wall_s <= self.target_min * 60:
            return "met"
        return f"missed beside {len(self.beside)} run{'s' * (len(self.beside) > 1)}" if self.beside \
            else "MISSED"

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "efficiency": round(self.efficiency, 3), "verdict": self.verdict}


def _combos(params: list[list[str]]) -> list[str]:
    return [", ".join(combo) for combo in itertools.product(*params)] if params else [""]


def _number(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not math.isnan(value) else None


def today(name: str) -> str:
    """``name`` as today's suite calls it: the record-cost classes of ``bench_policies`` were ``<X>Work``
    until they were renamed ``RecordCost<X>`` so that no comparing pattern selects them; records made
    before still count for their tier. (A rule, not a list of old names: retired names are listed only in
    the suite's catalogue, which the suite reads, so adding them there would start new asv series.)"""
    module, _, rest = name.partition(".")
    cls, dot, method = rest.partition(".")
    if module == "bench_policies" and cls.endswith("Work") and dot:
        return f"{module}.RecordCost{cls.removesuffix('Work')}.{method}"
    return name


def _selected(name: str, params: list[list[str]], pattern: str) -> list[int]:
    """Indices of the parameter combinations of ``name`` (read under today's name) that the tier's
    ``-b`` pattern selects."""
    name = today(name)
    if not params:
        return [0] if re.search(pattern, name) else []
    return [i for i, combo in enumerate(_combos(params)) if re.search(pattern, f"{name}({combo})")]


def _sampled_seconds(result: BenchmarkResult) -> list[float]:
    """Per parameter: seconds spent inside the samples of a ``time_`` benchmark."""
    repeats = result.stats.get("stats_repeat") or [1] * len(result.values)
    numbers = result.stats.get("stats_number") or [1] * len(result.values)
    return [
        (_number(value) or 0.0) * (_number(r) or 0) * (_number(n) or 0)
        for value, r, n in zip(result.values, repeats, numbers, strict=False)
    ]


def _cache_key(duration_key: str) -> str | None:
    """``bench_x:LINE`` of a ``<setup_cache bench_x:LINE>`` duration, else ``None``."""
    if duration_key.startswith("<setup_cache ") and duration_key.endswith(">"):
        return duration_key[len("<setup_cache "):-1]
    return None


def _used_cache(duration_key: str, used: set[str], known: set[str], present: set[str]) -> bool:
    """Whether ``<setup_cache bench_x:LINE>`` is one of the ``used`` caches.

    A key names the line of its ``setup_cache``; when the suite's source moved
    since the file was recorded, a key no current benchmark has counts for the
    used cache of its module, unless the file also holds a current key of that module (a commit
    re-recorded by a newer suite keeps the older run's durations: they are not this run's cost).
    ``known``: every ``setup_cache_key`` of the current suite; ``present``: the file's cache keys.
    """
    key = _cache_key(duration_key)
    if key is None:
        return False
    if key in used:
        return True
    module = key.split(":")[0]
    return (key not in known and module in {u.split(":")[0] for u in used}
            and not any(k in used and k.split(":")[0] == module for k in present))


@dataclass
class _Process:
    """The benchmarks one asv process ran for a file: their seconds, caches, and when it was free (ms)."""

    seconds: float = 0.0
    caches: set[str] = field(default_factory=set)
    free_at: float = -math.inf


#: asv's ``started_at`` is whole milliseconds and its ``duration`` excludes a little bookkeeping.
_SLACK_MS = 2000.0


def _gap(process: _Process, start: int | None, cache_seconds: float) -> float:
    """How far from ``start`` (ms) the process was ready for a benchmark: its end plus the
    ``setup_cache`` it still had to run; a process that ran nothing yet is the last resort."""
    if process.free_at == -math.inf:
        return math.inf
    return abs((start or 0) - (process.free_at + 1000 * cache_seconds))


def _processes(rows: list[tuple[BenchmarkResult, float, str | None]],
               durations: dict[str, float]) -> list[_Process]:
    """Deal the benchmarks to as few asv processes as their times need: one process runs one
    benchmark at a time, so a benchmark that starts before every process is free opens another.
    Of the free ones it goes to the process whose end, plus the module's ``setup_cache`` where that
    process has not run it yet, lies nearest its start (asv runs the cache just before)."""
    processes = [_Process()]
    for held, seconds, cache in sorted(rows, key=lambda row: row[0].started_at or 0):
        start = held.started_at
        free = [p for p in processes if start is None or p.free_at <= start + _SLACK_MS]
        if not free:
            free = [_Process()]
            processes.append(free[0])
        pending = durations.get(f"<setup_cache {cache}>", 0.0) if cache else 0.0
        gaps = [_gap(p, start, 0.0 if cache in p.caches else pending) for p in free]
        process = free[gaps.index(min(gaps))]
        process.seconds += seconds
        if cache:
            process.caches.add(cache)
        if start is not None:
            process.free_at = max(process.free_at, start + 1000 * (held.duration or 0.0))
    return processes


def tier_cost(record: ResultFile, benchmarks: dict[str, Any], tier: str,
              unrecorded: frozenset[str] = frozenset(), *, stored: bool = False) -> TierCost | None:
    """The tier's cost in one result file, or ``None`` when the file lacks some of its benchmarks.

    ``unrecorded``: benchmarks no file of the results directory holds yet; lacking them is no gap.
    ``stored``: the tier is the one written beside the file when it was recorded, so a gap is
    not a reason to doubt it (the benchmark was skipped or failed in that run).
    """
    cost = _pattern_cost(record, benchmarks, TIERS[tier], unrecorded, stored)
    if cost is None:
        return None
    count, wall, work = cost
    return TierCost(record.machine, record.commit, tier, count, round(wall, 1), round(work, 1),
                    TARGET_MINUTES.get(tier))


def pattern_seconds(record: ResultFile, benchmarks: dict[str, Any], pattern: str) -> float:
    """Wall seconds of the benchmarks an ``asv run -b`` pattern selects in one file, with the
    ``setup_cache`` they used (0 where the file holds none of them)."""
    cost = _pattern_cost(record, benchmarks, pattern, frozenset(), stored=True)
    return cost[1] if cost else 0.0


def _pattern_cost(record: ResultFile, benchmarks: dict[str, Any], pattern: str, unrecorded: frozenset[str],
                  stored: bool) -> tuple[int, float, float] | None:
    """``(benchmarks, wall seconds, unique work seconds)`` of the pattern's benchmarks in one file."""
    work = 0.0
    rows: list[tuple[BenchmarkResult, float, str | None]] = []  # what each benchmark cost, its cache
    records: dict[tuple[str, str], float] = {}
    count = 0
    for name, meta in benchmarks.items():
        if "params" not in meta:
            continue
        held = record.results.get(name)
        params = held.params if held and held.params else meta["params"]  # the file's own grid
        chosen = _selected(name, params, pattern)
        if not chosen:
            continue
        if held is None:
            if name in unrecorded or stored:
                continue
            return None  # the tier was not (fully) recorded for this commit
        count += 1
        share = len(chosen) / max(1, len(held.values))
        if meta["type"] == "time":
            sampled = _sampled_seconds(held)
            work += sum(sampled[i] for i in chosen if i < len(sampled))
            total = sum(sampled)
            share = sum(sampled[i] for i in chosen if i < len(sampled)) / total if total else share
        rows.append((held, (held.duration or 0.0) * share, meta.get("setup_cache_key")))
        if name.endswith("." + WORK_TRACK):
            module = name.split(".", 1)[0]
            combos = _combos(params)
            for i in chosen:
                value = _number(held.values[i]) if i < len(held.values) else None
                if value is not None:
                    key = (module, combos[i].split(", ")[0])
                    records[key] = max(records.get(key, 0.0), value)
    if not count:
        return None
    known = {meta["setup_cache_key"] for meta in benchmarks.values() if meta.get("setup_cache_key")}
    present = {key for key in map(_cache_key, record.durations) if key}
    wall = max(process.seconds + sum(v for k, v in record.durations.items()
                                     if _used_cache(k, process.caches, known, present))
               for process in _processes(rows, record.durations))  # side by side: the longest
    wall += record.durations.get("<build>", 0.0)  # building the commit (aot: seconds) is part of its cost
    return count, wall, work + sum(records.values())


def inferred_tier(record: ResultFile, benchmarks: dict[str, Any],
                  unrecorded: frozenset[str] = frozenset()) -> TierCost | None:
    """For a file recorded before tiers were stored: the largest tier (of those with targets) it holds.

    A smaller tier is never read out of a larger run, where its records may
    have been made (and paid for) by benchmarks of the larger tier; a larger
    tier must hold more benchmarks than the smaller one, not only excuses.
    """
    held: list[TierCost] = []
    for tier in TARGET_MINUTES:
        cost = tier_cost(record, benchmarks, tier, unrecorded)
        if cost is not None and (not held or cost.benchmarks > held[-1].benchmarks):
            held.append(cost)
    return held[-1] if held else None


def unrecorded_benchmarks(found: ResultSet) -> frozenset[str]:
    """Benchmarks of the suite (``benchmarks.json``) that no file of the directory holds yet."""
    recorded = {name for record in found.files for name in record.results}
    return frozenset(name for name in found.benchmarks if name not in recorded)


Interval = tuple[float, float]  #: when one benchmark ran, ms since the epoch (asv's ``started_at``)


def _intervals(record: ResultFile, names: set[str] | None = None) -> list[Interval]:
    """When each benchmark of the file (of ``names`` only, if given) ran."""
    return sorted((held.started_at, held.started_at + 1000 * (held.duration or 0.0))
                  for name, held in record.results.items()
                  if held.started_at is not None and (names is None or name in names))


def _overlap(ours: list[Interval], theirs: list[Interval]) -> bool:
    """Does any interval of ``ours`` overlap one of ``theirs`` (both sorted) by more than asv's slack?"""
    i = j = 0
    while i < len(ours) and j < len(theirs):
        (a, b), (c, d) = ours[i], theirs[j]
        if min(b, d) - max(a, c) > _SLACK_MS:
            return True
        if b < d:
            i += 1
        else:
            j += 1
    return False


def _beside(record: ResultFile, names: set[str], others: dict[int, tuple[ResultFile, list[Interval]]]
            ) -> list[str]:
    """Commits of other files of the record's machine whose benchmarks ran while its ``names`` did;
    ``others``: every file by ``id``, with when its benchmarks ran (read once for all rows)."""
    ours = _intervals(record, names)
    if not ours:
        return []
    end = max(b for _, b in ours)
    found = []
    for other, theirs in others.values():
        if other is record or other.machine != record.machine:
            continue
        spans_meet = bool(theirs) and theirs[0][0] < end and max(d for _, d in theirs) > ours[0][0]
        if spans_meet and _overlap(ours, theirs):
            found.append(other.commit)
    return sorted(found)


def costs(results: Path | ResultSet, tiers: list[str] | None = None) -> list[TierCost]:
    """Per result file (machine x commit): the cost of the tier it was recorded with.

    That is the tier stored beside the file (:mod:`vkbench.results.sidecar`)
    or, for older files, :func:`inferred_tier`. ``tiers`` keeps only files
    recorded as one of them. Unreadable files are in ``ResultSet.problems``.
    """
    found = results if isinstance(results, ResultSet) else read_dir(results)
    unrecorded = unrecorded_benchmarks(found)
    ran = {id(record): (record, _intervals(record)) for record in found.files}
    rows = []
    for record in found.files:
        if record.tier in TIERS:
            cost = tier_cost(record, found.benchmarks, record.tier, unrecorded, stored=True)
        else:
            cost = inferred_tier(record, found.benchmarks, unrecorded)
        if cost is not None and (not tiers or cost.tier in tiers):
            names = {name for name, meta in found.benchmarks.items() if "params" in meta
                     and _selected(name, meta["params"], TIERS[cost.tier])}
            cost.beside = _beside(record, names, ran)
            rows.append(cost)
    return rows


def render(rows: list[TierCost], markdown: bool = False,
           classes: dict[str, tuple[int, int]] | None = None) -> str:
    """The cost table; ``classes`` (commit -> (class index, commits in it)) adds what each row answers."""
    headers = ["machine", "commit", "tier", "benchmarks", "wall min", "unique work min", "efficiency",
               "target min"]
    cells = [[r.machine, r.commit[:8], r.tier, r.benchmarks, f"{r.wall_s / 60:.1f}", f"{r.work_s / 60:.1f}",
              f"{r.efficiency:.2f}", "-" if r.target_min is None else f"{r.target_min:g} ({r.verdict})"]
             for r in rows]
    if classes:
        headers.append("class (commits)")
        for row, cell in zip(rows, cells, strict=True):
            found = classes.get(row.commit)
            cell.append(f"{found[0]} ({found[1]})" if found else "-")
    return (tables.markdown if markdown else tables.render)(headers, cells)
