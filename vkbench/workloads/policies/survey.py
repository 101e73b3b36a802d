"""Lower every policy entry and say what blocks the rest.

:func:`survey` turns registry entries into rows (lowered with coverage, or
blocked with the stage and the exception); :func:`blockers` ranks the CPU ops
(and the partitioner's reasons) by how many policy entries they hold back.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from vkbench import tables
from vkbench.core.failures import first_error_line
from vkbench.core.lowering import LoweringError, lower_allowing_non_core
from vkbench.workloads.policies.cache import (
    export_program,
    load_export_failure,
    load_exported,
    save_export_failure,
    save_exported,
)
from vkbench.workloads.policies.registry import Entry, select

LOWERED = "lowered"
BLOCKED = "blocked"


@dataclass
class Row:
    """The outcome of one entry."""

    entry: str
    policy: str
    status: str  #: ``lowered`` or ``blocked``
    stage: str = ""  #: where a blocked entry failed: build/export/to_edge/partition/preprocess/to_executorch
    error_type: str = ""
    error: str = ""  #: the exception's first line
    coverage: dict[str, Any] | None = None  #: ``Coverage.to_json()`` when lowered
    reduced: str = ""
    notes: str = ""
    slow: bool = False
    seconds: float = 0.0  #: wall time of build + export + lowering
    #: Non-Core-ATen ops let through ``to_edge`` to the CPU; ``default_blocker`` is what
    #: stopped the default config ("to_edge: SpecViolationError: Operator ... not in Core ATen").
    allowed_on_cpu: list[str] = field(default_factory=list)
    default_blocker: str = ""
    #: A blocked row with ops let through: where the lowering stopped then.
    blocked_with_allowed: str = ""

    @property
    def lowered(self) -> bool:
        return self.status == LOWERED

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@contextlib.contextmanager
def _quiet_export_logs() -> Iterator[None]:
    """torch logs whole graphs when an export guard fails; the row keeps the first line."""
    names = ("torch.export", "torch._export", "torch.fx.experimental.symbolic_shapes", "torch._dynamo")
    saved = {name: logging.getLogger(name).level for name in names}
    for name in names:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def _blocked(entry: Entry, stage: str, error: BaseException | tuple[str, str], start: float) -> Row:
    """A blocked row; ``error`` is the exception or an ``(error_type, first_line)`` pair (cached failure)."""
    if isinstance(error, tuple):
        error_type, first_line = error
    elif isinstance(error, LoweringError):
        error_type, first_line = error.error_type, error.first_line
    else:
        error_type, first_line = type(error).__name__, first_error_line(error)
    return Row(
        entry.name, entry.policy, BLOCKED, stage=stage, error_type=error_type, error=first_line,
        reduced=entry.reduced, notes=entry.notes, slow=entry.slow,
        seconds=round(time.perf_counter() - start, 2),
    )


def survey_entry(
    entry: Entry, *, use_cache: bool = False, to_executorch: bool = True, partition_only: bool = False
) -> Row:
    """Build, export and lower one entry; never raises for a failing entry.

    ``partition_only`` stops after the partitioner (see :func:`vkbench.core.lowering.lower`):
    the row's counts are the partitioner's, its ``seconds`` exclude code generation.
    """
    start = time.perf_counter()
    failed = load_export_failure(entry.name) if use_cache else None
    if failed is not None:  # torch.export failed for these torch/lerobot/builder versions: it still does
        return _blocked(entry, "export", failed, start)
    with _quiet_export_logs():
        exported = load_exported(entry.name) if use_cache else None
        if exported is None:
            try:
                module, inputs = entry.build()
            except Exception as error:  # noqa: BLE001 - a failed build is a row
                return _blocked(entry, "build", error, start)
            try:
                exported = export_program(module, inputs)
            except LoweringError as error:
                if use_cache:
                    save_export_failure(entry.name, error.error_type, error.first_line)
                return _blocked(entry, error.stage, error, start)
            finally:
                del module, inputs
                gc.collect()
            if use_cache:
                save_exported(entry.name, exported)
        try:
            coverage, _, retry = lower_allowing_non_core(
                None, (), exported=exported,
                to_executorch=to_executorch and not partition_only,
                partition_only=partition_only)
        except Exception as error:  # noqa: BLE001 - bookkeeping failures still make a row
            return _blocked(entry, "lower", error, start)
        finally:
            del exported
            gc.collect()
    if coverage is None:  # still blocked: the row keeps the default config's blocker
        error = retry.default_error
        row = _blocked(entry, error.stage, error, start)  # type: ignore[union-attr]
        row.allowed_on_cpu = retry.allowed
        row.blocked_with_allowed = str(retry.last_error) if retry.allowed else ""
        return row
    return Row(
        entry.name, entry.policy, LOWERED, coverage=coverage.to_json(), reduced=entry.reduced,
        notes=entry.notes, slow=entry.slow, seconds=round(time.perf_counter() - start, 2),
        allowed_on_cpu=retry.allowed, default_blocker=str(retry.default_error) if retry.default_error else "",
    )


def survey(
    names: list[str] | None = None,
    progress: Callable[[str], None] | None = None,
    *,
    include_slow: bool = True,
    use_cache: bool = False,
) -> list[Row]:
    """One :class:`Row` per selected entry (entry or policy names; all when empty).

    ``progress`` gets a line before and after each entry. Raises ``KeyError``
    for an unknown name before lowering anything.
    """
    entries = select(names, include_slow=include_slow)
    rows = []
    for index, entry in enumerate(entries, 1):
        if progress:
            progress(f"[{index}/{len(entries)}] {entry.name} ...")
        row = survey_entry(entry, use_cache=use_cache)
        if progress:
            progress(f"[{index}/{len(entries)}] {entry.name}: {_status_text(row)} ({row.seconds:.1f}s)")
        rows.append(row)
    return rows


# ------------------------------------------------------------------ blockers
@dataclass
class Blocker:
    """One CPU op (or one reason) and the policy entries it holds back."""

    name: str
    nodes: int = 0
    entries: list[str] = field(default_factory=list)
    #: Entries whose only CPU op this is: one new Vulkan kernel would delegate them fully.
    unblocks: list[str] = field(default_factory=list)
    reasons: dict[str, int] = field(default_factory=dict)  #: (per op) reason -> nodes
    ops: dict[str, int] = field(default_factory=dict)  #: (per reason) op -> nodes

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _rank(table: dict[str, Blocker]) -> list[Blocker]:
    return sorted(
        table.values(), key=lambda b: (-len(b.unblocks), -len(b.entries), -b.nodes, b.name)
    )


def blockers(rows: list[Row]) -> dict[str, list[Blocker]]:
    """``{"by_op": [...], "by_reason": [...]}`` over the lowered rows.

    Sorted by how many policy entries one new Vulkan kernel would fully
    unblock (the op is the entry's only CPU op), then by how many entries it
    appears in, then by node count.
    """
    by_op: dict[str, Blocker] = {}
    by_reason: dict[str, Blocker] = {}
    for row in rows:
        if not row.lowered or not row.coverage:
            continue
        cpu_ops = row.coverage.get("cpu_ops", {})
        for op, count in cpu_ops.items():
            blocker = by_op.setdefault(op, Blocker(op))
            blocker.nodes += count
            blocker.entries.append(row.entry)
            if len(cpu_ops) == 1:
                blocker.unblocks.append(row.entry)
        reason_ops: dict[str, set[str]] = {}
        for cpu in row.coverage.get("cpu_nodes", []):
            for reason in cpu["reasons"]:
                op_blocker = by_op[cpu["op"]]
                op_blocker.reasons[reason] = op_blocker.reasons.get(reason, 0) + 1
                blocker = by_reason.setdefault(reason, Blocker(reason))
                blocker.nodes += 1
                blocker.ops[cpu["op"]] = blocker.ops.get(cpu["op"], 0) + 1
                reason_ops.setdefault(reason, set()).add(cpu["op"])
        all_ops = set(cpu_ops)
        for reason, ops in reason_ops.items():
            by_reason[reason].entries.append(row.entry)
            if ops == all_ops:
                by_reason[reason].unblocks.append(row.entry)
    return {"by_op": _rank(by_op), "by_reason": _rank(by_reason)}


# ---------------------------------------------------------------- formatting
def _status_text(row: Row) -> str:
    if row.lowered and row.coverage:
        c = row.coverage
        return (
            f"lowered: {c['nodes_total']} nodes, {c['nodes_cpu']} on CPU "
            f"({c['cpu_percent']:.1f}%), {c['vulkan_programs']} Vulkan programs"
        )
    return f"blocked at {row.stage}: {row.error_type}: {row.error}"


def _status(row: Row) -> str:
    """``lowered``, ``blocked@stage``, or for a row lowered with non-Core-ATen ops let through:
    ``blocked@to_edge by aten.x.y; lowered with it on the CPU``."""
    allowed = ", ".join(row.allowed_on_cpu)
    if not row.lowered and allowed:
        return f"blocked@{row.stage}; with {allowed} on the CPU: {row.blocked_with_allowed}"
    if not row.lowered:
        return f"blocked@{row.stage}"
    if row.allowed_on_cpu:
        return f"blocked@to_edge by {allowed}; lowered with it on the CPU"
    return row.status


def _cells(row: Row) -> list[str]:
    c = row.coverage or {}
    return [
        row.entry,
        _status(row),
        str(c.get("nodes_total", "")),
        str(c.get("nodes_cpu", "")),
        f"{c['cpu_percent']:.1f}" if c else "",
        str(c.get("vulkan_programs", "")),
        ", ".join(f"{op}x{n}" for op, n in c.get("cpu_ops", {}).items())
        if row.lowered
        else f"{row.error_type}: {row.error}",
        row.reduced,
    ]


_HEADER = ["entry", "status", "nodes", "cpu", "cpu%", "programs", "cpu ops / error", "reduced"]


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def format_table(rows: list[Row]) -> str:
    """A plain-text table of rows, then the top blockers."""
    lines = [tables.render(_HEADER, [[_clip(cell, 90) for cell in _cells(row)] for row in rows])]
    ranked = blockers(rows)["by_op"]
    if ranked:
        lines += ["", "What blocks the rest (per CPU op; unblocks = entries it is the only CPU op of):"]
        for b in ranked:
            reasons = "; ".join(f"{_clip(r, 70)} x{n}" for r, n in b.reasons.items())
            lines.append(
                f"  {b.name}: {b.nodes} nodes in {len(b.entries)} entries, unblocks {len(b.unblocks)}"
                f" [{', '.join(b.entries)}] - {reasons}"
            )
    return "\n".join(lines)


def format_markdown(rows: list[Row]) -> str:
    """Markdown: the rows table and both blocker tables."""
    lines = [tables.markdown(_HEADER, [_cells(row) for row in rows])]
    ranked = blockers(rows)
    by_op = [[f"`{b.name}`", len(b.unblocks), f"{len(b.entries)}: {', '.join(b.entries)}", b.nodes,
              "; ".join(f"{r} ({n})" for r, n in b.reasons.items())] for b in ranked["by_op"]]
    by_reason = [[b.name, len(b.unblocks), f"{len(b.entries)}: {', '.join(b.entries)}", b.nodes,
                  ", ".join(f"`{op}` ({n})" for op, n in b.ops.items())] for b in ranked["by_reason"]]
    lines += ["", "### What blocks the rest, per CPU op", "",
              tables.markdown(["op", "unblocks", "entries", "nodes", "reasons"], by_op),
              "", "### What blocks the rest, per reason", "",
              tables.markdown(["reason", "unblocks", "entries", "nodes", "ops"], by_reason)]
    return "\n".join(lines)


def to_json(rows: list[Row]) -> dict[str, Any]:
    ranked = blockers(rows)
    return {
        "rows": [row.to_json() for row in rows],
        "blockers": {kind: [b.to_json() for b in items] for kind, items in ranked.items()},
    }


def format_json(rows: list[Row]) -> str:
    return json.dumps(to_json(rows), indent=2, sort_keys=False)


FORMATTERS: dict[str, Callable[[list[Row]], str]] = {
    "table": format_table,
    "markdown": format_markdown,
    "json": format_json,
}
