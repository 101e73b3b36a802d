"""The verdict on one change: which compared tracks stepped between two commits, and whether that fails.

Pure: two asv result files in, rows out (:func:`compare`), and the markdown a PR comment shows
(:func:`report`). ``vkbench gate`` (:mod:`vkbench.runs.gate_run`) measures both sides, re-measures
every failing row before reporting it, and exits 1 only for a row that reproduced.

What fails, and why:

* **Counted partitioner work** (``PartitionWork.track_partition_events``, exact from run to run):
  a phase whose events move by :data:`FACTOR` or more *and* by at least :data:`EVENTS_PER_BLOCK`
  events per block of the graph (a few events more per node is not a finding). Up is a regression; down is an
  *unexpected improvement* and fails too, as PyTorch's ``pr_time_benchmarks`` do: a changed support
  decision moves torch.fx's work either way, and a deliberate speed-up is accepted by a person.
  ``fusable_patterns`` and ``total`` are judged net of ``pattern_graphs`` (the registered graph
  patterns' own work: building their graphs, matching them): a new pattern steps its own phase,
  shown as a notice, and nothing else.
* **A partitioning decision changed** on ``Blocks(n)`` (``track_partitions``, either way): the support
  checks decide differently, which moves torch.fx's ``propose_partitions`` work; named with that
  phase's events on both sides.
* **Coverage counts** (probes, policies): a count got worse (more CPU ops, programs, failures;
  fewer ExecuTorch-delegated nodes). A better one is reported as an improvement and passes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from vkbench.results.model import ResultFile
from vkbench.suite import catalogue

#: A counted phase fails at this ratio or more (the gate's -f).
FACTOR = 1.02
#: ... and only when it moves by at least this many events per block of ``Blocks(n)`` (~7 nodes): a
#: loop iteration per node (one more registered pattern entry in the per-node detector loop: ~12 a
#: block) is not a finding, work per node is (re-checking inputs' dtypes: ~360 a block).
EVENTS_PER_BLOCK = 50
#: Tracks where more is better.
HIGHER_IS_BETTER = {catalogue.PROBE_ET_DELEGATED.name, catalogue.POLICY_ET_DELEGATED.name}
#: Phases judged on their own (``fusable_patterns`` and ``total`` net of ``pattern_graphs``).
JUDGED_PHASES = (*catalogue.PHASES, "total")

REGRESSION = "regression"
UNEXPECTED = "unexpected improvement"
DECISION = "decision changed"
IMPROVED = "improved"
NOTICE = "notice"
FAILING = (REGRESSION, UNEXPECTED, DECISION)


@dataclass
class Row:
    """One compared point that stepped."""

    kind: str  #: :data:`REGRESSION`, :data:`DECISION`, :data:`IMPROVED` or :data:`NOTICE`
    benchmark: str  #: ``bench_partition.PartitionWork.track_partition_events``
    point: str  #: asv's parameter string, ``50, 'is_node_supported'``
    phase: str  #: the phase (counted work) or the owner's name of what moved
    before: float | None
    after: float | None
    note: str = ""
    confirmed: bool | None = None  #: None until re-measured

    @property
    def ratio(self) -> float | None:
        if self.before in (None, 0) or self.after is None:
            return None
        return self.after / self.before

    @property
    def key(self) -> tuple[str, str, str]:
        return self.benchmark, self.point, self.kind

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio}


def _number(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def _points(record: ResultFile, benchmark: str) -> dict[tuple[str, ...], float | None]:
    return {params: _number(value) for params, value in record.values(benchmark).items()}


def _net(points: dict[tuple[str, ...], float | None], blocks: str, phase: str) -> float | None:
    """A phase's events at ``blocks``; ``fusable_patterns`` and ``total`` without ``pattern_graphs``."""
    value = points.get((blocks, phase))
    if value is None or phase not in ("fusable_patterns", "total"):
        return value
    return value - (points.get((blocks, "pattern_graphs")) or 0.0)


Points = dict[tuple[str, ...], float | None]  #: parameter values (``("50", "total")``) -> value


def as_points(blocks: int, events: dict[str, int]) -> Points:
    """One count record's ``{phase: events}`` as ``PartitionWork``'s asv points at ``blocks``."""
    return {(str(blocks), phase): float(value) for phase, value in events.items()}


def work_rows(before_all: Points, after_all: Points, factor: float = FACTOR,
              per_block: float = EVENTS_PER_BLOCK) -> list[Row]:
    """The counted work's rows: failing phases, improvements, and a notice for the pattern graphs."""
    name = catalogue.PARTITION_EVENTS.name
    rows = []
    for blocks in sorted({params[0] for params in after_all}, key=lambda b: int(b)):
        total = _net(before_all, blocks, "total") or 0.0
        floor = per_block * int(blocks)
        for phase in JUDGED_PHASES:
            before, after = _net(before_all, blocks, phase), _net(after_all, blocks, phase)
            if before is None or after is None or before == after:
                continue
            grew = after - before
            if before > 0 and after / before >= factor and grew >= floor:
                rows.append(Row(REGRESSION, name, f"{blocks}, '{phase}'", phase, before, after,
                                f"+{grew:,.0f} events, {grew / total:.2%} of the partition"))
            elif before > 0 and before / max(after, 1.0) >= factor and -grew >= floor:
                rows.append(Row(UNEXPECTED, name, f"{blocks}, '{phase}'", phase, before, after,
                                f"{grew:,.0f} events: the work moved, as a changed support decision moves "
                                "it; if the PR meant to speed this up, say so and accept it"))
        graphs_before = before_all.get((blocks, "pattern_graphs"))
        graphs_after = after_all.get((blocks, "pattern_graphs"))
        if graphs_before is not None and graphs_after is not None and graphs_before != graphs_after:
            rows.append(Row(NOTICE, name, f"{blocks}, 'pattern_graphs'", "pattern_graphs", graphs_before,
                            graphs_after, "the registered graph patterns' own work (building their graphs, "
                            "matching them; a new pattern steps it): not judged"))
    return rows


def decision_rows(partitions_before: dict[str, float | None], partitions_after: dict[str, float | None],
                  work_before: Points, work_after: Points) -> list[Row]:
    """A changed partitioning of ``Blocks(n)`` (``blocks -> partitions``), with torch.fx's work beside it."""
    name = catalogue.PARTITION_COUNT.name
    rows = []
    for blocks, after in partitions_after.items():
        before = partitions_before.get(blocks)
        if before is None or after is None or before == after:
            continue
        params = (blocks,)
        torch_fx = (work_before.get((blocks, "propose_partitions")),
                    work_after.get((blocks, "propose_partitions")))
        moved = (f"propose_partitions {torch_fx[0]:,.0f} -> {torch_fx[1]:,.0f} events"
                 if None not in torch_fx else "propose_partitions not counted at this size")
        rows.append(Row(DECISION, name, params[0], "propose_partitions", before, after,
                        f"Blocks({params[0]}) partitions {before:.0f} -> {after:.0f}: a support decision "
                        f"changed; {moved}"))
    return rows


def _coverage_rows(base: ResultFile, head: ResultFile, names: Iterable[str]) -> list[Row]:
    rows = []
    for name in names:
        before_points = _points(base, name)
        for params, after in _points(head, name).items():
            before = before_points.get(params)
            if params not in before_points or before == after:
                continue
            if before is None or after is None:  # a point that stopped (or started) lowering
                kind = REGRESSION if after is None else IMPROVED
            else:
                worse = after < before if name in HIGHER_IS_BETTER else after > before
                kind = REGRESSION if worse else IMPROVED
            owner = "Vulkan partitioner" if ".Probe" in name or ".PolicyPartition" in name else ""
            rows.append(Row(kind, name, ", ".join(params), owner, before, after))
    return rows


def compare(base: ResultFile, head: ResultFile, compared: Iterable[str], factor: float = FACTOR,
            per_block: float = EVENTS_PER_BLOCK) -> list[Row]:
    """Every stepped point of the ``compared`` benchmarks (names) between ``base`` and ``head``."""
    names = set(compared)
    work = catalogue.PARTITION_EVENTS.name
    before_work, after_work = _points(base, work), _points(head, work)
    rows = work_rows(before_work, after_work, factor, per_block) if work in names else []
    if catalogue.PARTITION_COUNT.name in names:
        count = catalogue.PARTITION_COUNT.name
        rows += decision_rows({p[0]: v for p, v in _points(base, count).items()},
                              {p[0]: v for p, v in _points(head, count).items()}, before_work, after_work)
    others = sorted(names - {catalogue.PARTITION_EVENTS.name, catalogue.PARTITION_COUNT.name})
    return rows + _coverage_rows(base, head, others)


def failing(rows: Iterable[Row]) -> list[Row]:
    return [row for row in rows if row.kind in FAILING]


def _value(value: float | None) -> str:
    return "failed" if value is None else f"{value:,.0f}" if value == int(value) else f"{value:,.2f}"


def report(base: str, head: str, rows: list[Row], compared: int, repro: str, runs: list[str],
           reused: list[str] = ()) -> str:
    """The markdown a CI job posts: the verdict, then the rows that fail (with their confirmation),
    then the others, then how to reproduce (and which side an earlier gate run measured)."""
    bad = [r for r in failing(rows) if r.confirmed]
    unconfirmed = [r for r in failing(rows) if not r.confirmed]
    head_line = (f"❌ {len(bad)} confirmed regression{'s' * (len(bad) != 1)} (or unexpected moves)" if bad
                 else "✅ no confirmed regression")
    lines = [f"## vkbench gate: `{base[:12]}` → `{head[:12]}`", "",
             f"{head_line} · {compared} points compared · {len(rows)} stepped", ""]
    table = ["| | Benchmark | Point | Phase / owner | BASE | HEAD | Change | Confirmation |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    order = {REGRESSION: 0, UNEXPECTED: 1, DECISION: 2, IMPROVED: 3, NOTICE: 4}
    for row in sorted(rows, key=lambda r: (not r.confirmed, order[r.kind])):
        mark = {REGRESSION: "❌", UNEXPECTED: "❌", DECISION: "❌", IMPROVED: "✅", NOTICE: "ℹ️"}[row.kind]
        if row.kind in FAILING and not row.confirmed:
            mark = "⚠️"
        confirmation = ("reproduced on both sides" if row.confirmed else "did not reproduce: dropped"
                        if row.confirmed is False else "not judged")
        change = f"{row.ratio:.4f}x" if row.ratio is not None else "—"
        short = row.benchmark.split(".", 1)[1]
        table.append(f"| {mark} {row.kind} | `{short}` | {row.point} | {row.phase} | {_value(row.before)} | "
                     f"{_value(row.after)} | {change} | {confirmation} |")
    if rows:
        lines += table + [""]
    lines += [f"- {row.note}" for row in rows if row.note] + ([""] if any(r.note for r in rows) else [])
    if unconfirmed:
        lines += [f"{len(unconfirmed)} step(s) did not reproduce when both sides were measured again: "
                  "not a finding.", ""]
    lines += ["Reproduce:", "", "```", repro, "```", "", "asv runs:", ""]
    lines += [f"- `{run}`" for run in runs]
    lines += [f"- `{commit[:12]}`: kept from an earlier gate run (same commit, suite versions, torch and "
              "config; `--fresh` measures it again)" for commit in reused]
    return "\n".join(lines) + "\n"
