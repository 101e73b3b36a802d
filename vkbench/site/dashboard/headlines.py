"""The dashboard's headlines: each section's takeaway as one sentence of numbers."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

from vkbench.results.changes import Change
from vkbench.site.dashboard.views import (
    EntryShare,
    Scaling,
    StepLimit,
    Survey,
    Upstream,
    fit_exponent,
    local_slopes,
    reasons_in_order,
)
from vkbench.site.text import plural
from vkbench.suite import catalogue


def pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def share_headline(survey: Survey) -> str:
    """Overall Vulkan share, the biggest entry's share, and how many entries never reach the partitioner."""
    lowered = [e for e in survey.entries if e.status == "lowered"]
    blocked = [e for e in survey.entries if e.status != "lowered"]
    total, delegated = sum(e.total for e in lowered), sum(e.delegated for e in lowered)
    text = f"Vulkan takes {pct(delegated, total)} of the {total:,} nodes of {len(lowered)} lowered entries"
    if lowered:
        big = max(lowered, key=lambda e: e.total)
        text += f" ({pct(big.delegated, big.total)} of {big.entry}'s {big.total:,})"
    if blocked:
        stages = Counter(e.stage or "?" for e in blocked)
        verb = "is" if len(blocked) == 1 else "are"
        text += (f"; {len(blocked)} of {len(survey.entries)} entries {verb} blocked before delegation ("
                 + ", ".join(f"{n} at {s}" for s, n in stages.most_common()) + ")")
    return text


def blockers_headline(blockers: list[dict[str, Any]], entries: list[EntryShare]) -> str:
    """The op with most CPU nodes, the op that alone fully delegates most entries, the top reason."""
    if not blockers:
        return "No CPU op blocks full delegation."
    top = max(blockers, key=lambda b: b.get("nodes", 0))
    text = (f"{top['name']} keeps the most nodes on the CPU ({top['nodes']} in "
            f"{plural(len(top.get('entries', [])), 'entry', 'entries')})")
    unblocking = max(blockers, key=lambda b: len(b.get("unblocks", [])))
    if unblocking.get("unblocks"):
        text += (f"; supporting {unblocking['name']} alone would fully delegate "
                 + " and ".join(unblocking["unblocks"]))
    reasons = reasons_in_order(entries)
    if reasons:
        totals: Counter[str] = Counter()
        for entry in entries:
            totals.update(entry.cpu_by_reason)
        cpu = sum(totals.values())
        text += f"; “{reasons[0]}” explains {pct(totals[reasons[0]], cpu)} of {cpu} CPU nodes"
    return text


def scaling_headline(scale: Scaling) -> str:
    """Fitted exponent, the measured range, and the phase that dominates at the largest size."""
    k = scale.exponent
    sizes = sorted(scale.seconds)
    text = (f"Partitioning grows as n^{k:.2f}" if k is not None else "Partition time")
    text += (f": {scale.seconds[sizes[0]]:.2f} s at {sizes[0]} blocks → "
             f"{scale.seconds[sizes[-1]]:.2f} s at {sizes[-1]}")
    slopes = local_slopes(scale.seconds)
    if len(slopes) >= 2:
        text += f" (local slope {slopes[0][2]:.2f} → {slopes[-1][2]:.2f})"
    at = max((n for values in scale.phases.values() for n in values), default=None)
    if at is not None:
        shares = {p: v[at] for p, v in scale.phases.items() if at in v}
        phase = max(shares, key=lambda p: shares[p])
        k_phase = fit_exponent(scale.phases[phase])
        text += f"; {phase} takes {pct(shares[phase], sum(shares.values()))} at {at} blocks"
        if k_phase is not None:
            text += f" and grows as n^{k_phase:.2f}"
    return text


def upstream_headline(upstream: Upstream) -> str:
    """How many commits over which dates, then the regressing events by commit and subject, then the
    improving ones: one event per commit (:mod:`vkbench.results.events`), never a count of rows."""
    def day(ms: int) -> str:
        return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d")

    def name(commit: str) -> str:
        version = upstream.releases.get(commit[:8])
        return commit[:8] + (f" (v{version})" if version else "")

    def where(change: Change) -> str:
        return f"at {name(change.commit)}" if change.exact else \
            f"between {name(change.previous)} and {name(change.commit)}"

    def told(rows: list[Change], place: bool) -> list[str]:
        """One phrase per step; failures at the same place are told together."""
        failing: dict[str, list[str]] = {}
        phrases = []
        for change in rows:
            at = f" {where(change)}" if place else ""
            if change.fails:
                failing.setdefault(at, []).append(change.param)
            elif change.benchmark == catalogue.PROBE_FAILED.name:
                phrases.append(f"{change.param} lowers again{at}")
            else:
                phrases.append(f"{change.param} {change.before} → {change.after} CPU ops{at}")
        grouped = [(f"{', '.join(params[:2])} and {len(params) - 2} more" if len(params) > 3 else
                    ", ".join(params)) + (" fail" if len(params) > 1 else " fails") + at
                   for at, params in failing.items()]
        return grouped + phrases

    def event(commit: str, rows: list[Change]) -> str:
        own = [r for r in rows if r.commit == commit] or rows
        head = own[0]
        phrases = told(own, place=not head.subject)
        more = f" (+{len(phrases) - 3} more)" if len(phrases) > 3 else ""
        text = "; ".join(phrases[:3]) + more
        if head.subject:
            pr = f" (#{head.pr})" if head.pr and f"#{head.pr}" not in head.subject else ""
            text = f"{name(commit)} “{head.subject}”{pr}: {text}"
        repeats = sorted({f"{name(r.previous)}..{name(r.commit)}" for r in rows if r.commit != commit})
        return text + (f" (also {', '.join(repeats)})" if repeats else "")

    commits = upstream.commits
    text = (f"{len(commits)} upstream commit{'s' if len(commits) != 1 else ''} recorded "
            f"({day(commits[0][1])} → {day(commits[-1][1])})")
    if not upstream.changes:
        return text + f": no probe or policy changed its CPU-op count across {len(upstream.series)} charts"
    events: dict[str, list[Change]] = {}
    # a commit's own events (subject known) before ranges, the main line before the release line
    for change in sorted(upstream.changes, key=lambda c: (not c.subject, c.line != "main")):
        events.setdefault(change.event or change.commit, []).append(change)
    parts = []
    regressing = {c: r for c, r in events.items() if any(x.regression for x in r)}
    improving = {c: r for c, r in events.items() if c not in regressing}
    for label, chosen in (("regressing", regressing), ("improving", improving)):
        if chosen:
            told_events = [event(commit, rows) for commit, rows in chosen.items()]
            more = f" (+{len(told_events) - 3} more)" if len(told_events) > 3 else ""
            parts.append(f"{plural(len(chosen), f'{label} event', f'{label} events')}: "
                         + ". ".join(told_events[:3]) + more)
    return text + ". " + ". ".join(parts)


def steps_headline(limits: list[StepLimit]) -> str:
    """Per tracer setting, the step limits seen across devices (the tracer is the known limiter)."""
    parts: list[str] = []
    everywhere = sorted({s.device for s in limits})
    for tracer in ("on", "off", ""):
        group = [s for s in limits if s.tracer == tracer]
        if not group:
            continue
        devices = sorted({s.device for s in group})
        who = " and ".join(devices) if len(devices) <= 3 else f"{len(devices)} devices"
        if parts and devices == everywhere and len(devices) > 1:
            who = "every device"
        subject = "it" if parts else "Many(n)"
        setting = (("with it " if parts else "with the event tracer ") + tracer.upper() if tracer
                   else "with an unnamed tracer setting")
        if all(s.limit >= s.cap for s in group):
            parts.append(f"{setting}, {subject} reaches the {group[0].cap:,}-step cap on {who}")
            continue
        low, high = min(s.limit for s in group), max(s.limit for s in group)
        values = f"{low:,}" if low == high else f"{low:,}–{high:,}"
        parts.append(f"{setting}, {subject} stops at {values} steps on {who}")
    text = "; ".join(parts)
    return text[:1].upper() + text[1:]
