"""The dashboard's plots: matplotlib figures drawn without pyplot, returned as inline SVG.

No pyplot means no global figure state; every plot draws inside ``rc_context`` (:func:`styled`), so
the style is the dashboard's alone, and :func:`svg_of` prefixes every id so several plots share one
page. Matplotlib's SVG output is deterministic (``svg.hashsalt``, no date), so a page rebuilt from the
same results is byte-identical.
"""

from __future__ import annotations

import functools
import html
import io
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from vkbench.site.dashboard.views import (
    PARTITION_TIME,
    CommitSeries,
    EntryShare,
    Scaling,
    StepLimit,
    fit_exponent,
    local_slopes,
    reason_category,
    reasons_in_order,
)
from vkbench.site.text import plural

#: Colours: Vulkan blue for delegated work, warm tones for the CPU reasons.
DELEGATED = "#2f6db5"
REASON_COLOURS = {
    "no operator implementation": "#e07b39",
    "op args not supported": "#e3b23c",
    "dtype float64 not supported": "#b5485d",
    "dtype bool not supported": "#8e6bbf",
    "dtype int32 not supported": "#5fa8a0",
    "op does not support high dim tensors": "#6d8f3a",
}
SPARE_COLOURS = ("#c27c9c", "#7f7f7f", "#a0785a", "#4f8fbf", "#bfa640")
STAGE_COLOURS = {"build": "#9aa5b1", "export": "#c0504d", "to_edge": "#8e6bbf", "partition": "#3d7f7a",
                 "preprocess": "#bfa640", "to_executorch": "#4a5667"}
FAILED = "#c0392b"
#: Points recorded by a vkbench suite older than the digest: drawn, never compared.
OLDER = "#9a9a9a"
TRACER_COLOURS = {"off": "#2f6db5", "on": "#e07b39", "": "#7f7f7f"}

def _style() -> dict[str, Any]:
    """One look for every plot; ``svg.fonttype: none`` keeps labels as text (searchable, crisp)."""
    return {"svg.fonttype": "none", "svg.hashsalt": "vkbench", "font.family": "sans-serif",
            "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial"], "font.size": 9,
            "axes.spines.top": False, "axes.spines.right": False, "axes.edgecolor": "#888",
            "axes.titlesize": 10, "axes.titleweight": "bold", "axes.labelcolor": "#333",
            "xtick.color": "#555", "ytick.color": "#333", "legend.frameon": False,
            "axes.grid": True, "grid.color": "#e6e6e6", "grid.linewidth": 0.7, "axes.axisbelow": True}


def styled[**P](plot: Callable[P, str]) -> Callable[P, str]:
    """Draw and save inside ``rc_context``: the style applies to our plots only, not to the process."""

    @functools.wraps(plot)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> str:
        import matplotlib

        with matplotlib.rc_context(_style()):
            return plot(*args, **kwargs)

    return wrapper


def new_figure(width: float, height: float) -> Any:
    """A pyplot-free figure (no backend or figure registry involved), laid out by matplotlib."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def svg_of(fig: Any, key: str, label: str) -> str:
    """The figure as inline SVG: ids prefixed by ``key`` so several plots in one page never collide."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    ids = set(re.findall(r'\bid="([^"]+)"', text))
    text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{key}-{m.group(1)}"', text)
    text = re.sub(r'(href="#|url\(#)([^")]+)', lambda m: m.group(1) + (
        f"{key}-{m.group(2)}" if m.group(2) in ids else m.group(2)), text)
    text = re.sub(r'<svg\b([^>]*?)\swidth="[^"]*"\s+height="[^"]*"', r"<svg\1", text, count=1)
    return text.replace("<svg", f'<svg class="plot-svg" role="img" aria-label="{html.escape(label)}"', 1)


def _reason_colours(reasons: list[str]) -> dict[str, str]:
    colours, spare = {}, iter(SPARE_COLOURS * 4)
    for reason in reasons:
        colours[reason] = REASON_COLOURS.get(reason) or next(spare)
    return colours


@styled
def plot_share(entries: list[EntryShare]) -> str:
    """Left: each entry's Vulkan share (blocked entries: a bar in the colour of the stage that failed).
    Right: its CPU nodes stacked by partitioner reason. Shares near 100% hide the CPU slivers, so the
    CPU nodes get their own absolute axis."""
    reasons = reasons_in_order(entries)
    colours = _reason_colours(reasons)
    rows = len(entries)
    fig = new_figure(10, 0.75 + 0.24 * rows)
    left, right = fig.subplots(1, 2, sharey=True, width_ratios=[1.15, 1])
    y = list(range(rows))
    policies = [e.policy for e in entries]
    for i, entry in enumerate(entries):
        if i and policies[i] != policies[i - 1]:
            for ax in (left, right):
                ax.axhline(i - 0.5, color="#d4d4d4", linewidth=0.6)
        if entry.status != "lowered":
            colour = STAGE_COLOURS.get(entry.stage, "#9aa5b1")
            left.barh(i, 100, facecolor="#f1f3f6", height=0.7, hatch="///", edgecolor=colour, linewidth=0)
            left.text(2, i, f"blocked at {entry.stage or '?'}: {entry.error_type}", va="center",
                      fontsize=7.5, color="#1d2733")
            continue
        pct = 100 * entry.share
        left.barh(i, pct, color=DELEGATED, height=0.7)
        left.barh(i, 100 - pct, left=pct, color="#f2c9a8", height=0.7)
        label = f"{pct:.1f}% of {entry.total:,}"
        if entry.et_share is not None:  # ExecuTorch's count, only where the record has it
            et_total = (entry.et_delegated or 0) + (entry.et_non_delegated or 0)
            label += f"  ·  ExecuTorch: {100 * entry.et_share:.1f}% of {et_total:,}"
        left.text(1.5, i, label, va="center", fontsize=7.5, color="white")
        start = 0
        for reason in reasons:
            count = entry.cpu_by_reason.get(reason, 0)
            if count:
                right.barh(i, count, left=start, color=colours[reason], height=0.7)
                start += count
        right.text(start + 0.6, i, str(start), va="center", fontsize=7.5, color="#333")
    left.set_yticks(y, [e.entry for e in entries], fontsize=8)
    left.set_ylim(rows - 0.5, -0.5)
    left.set_xlim(0, 100)
    left.set_xlabel("nodes delegated to Vulkan (%)")
    left.set_title("Vulkan share of each entry's graph", loc="left")
    right.set_xlabel("nodes left on the CPU")
    right.set_title("CPU nodes by partitioner reason", loc="left")
    right.set_xlim(0, max([e.cpu for e in entries] + [1]) * 1.12)
    right.tick_params(axis="y", length=0)
    for ax in (left, right):
        ax.grid(axis="y", visible=False)
    from matplotlib.patches import Patch

    handles = [Patch(color=colours[r], label=r) for r in reasons]
    stages = [s for s in STAGE_COLOURS if any(e.stage == s and e.status != "lowered" for e in entries)]
    handles += [Patch(facecolor="#f1f3f6", hatch="///", edgecolor=STAGE_COLOURS[s], label=f"blocked at {s}")
                for s in stages]
    fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=8)
    return svg_of(fig, "share", "Vulkan share and CPU nodes by reason, per policy entry")


@styled
def plot_blockers(blockers: list[dict[str, Any]], entries: list[EntryShare]) -> str:
    """Top CPU ops by nodes (stacked by reason, annotated with the entries each would fully delegate),
    next to the CPU nodes of all entries by reason."""
    reasons = reasons_in_order(entries)
    colours = _reason_colours(reasons)
    top = blockers[:12]
    fig = new_figure(10, 0.9 + 0.3 * max(len(top), len(reasons)))
    left, right = fig.subplots(1, 2, width_ratios=[1.9, 1])
    for i, blocker in enumerate(top):
        start = 0
        by_reason: Counter[str] = Counter()
        for reason, nodes in (blocker.get("reasons") or {"?": blocker.get("nodes", 0)}).items():
            by_reason[reason_category(reason)] += nodes
        for reason, nodes in by_reason.most_common():
            left.barh(i, nodes, left=start, color=colours.get(reason, "#7f7f7f"), height=0.7)
            start += nodes
        touched = len(blocker.get("entries", []))
        note = f"{plural(start, 'node', 'nodes')} · {plural(touched, 'entry', 'entries')}"
        if blocker.get("unblocks"):
            note += " · unblocks " + ", ".join(blocker["unblocks"])
        left.text(start + 1, i, note, va="center", fontsize=7.5,
                  color="#1d2733", fontweight="bold" if blocker.get("unblocks") else "normal")
    left.set_yticks(range(len(top)), [b["name"] for b in top], fontsize=8)
    left.set_ylim(len(top) - 0.5, -0.5)
    left.set_xlim(0, max([b.get("nodes", 0) for b in top] + [1]) * 2.1)
    left.set_xlabel("nodes left on the CPU (all lowered entries)")
    left.set_title("Top CPU ops", loc="left")
    left.grid(axis="y", visible=False)
    totals: Counter[str] = Counter()
    for entry in entries:
        totals.update(entry.cpu_by_reason)
    names = list(reasons)
    right.barh(range(len(names)), [totals[r] for r in names], color=[colours[r] for r in names], height=0.7)
    for i, reason in enumerate(names):
        right.text(totals[reason] + 2, i, str(totals[reason]), va="center", fontsize=7.5)
    right.set_yticks(range(len(names)), names, fontsize=8)
    right.set_ylim(len(names) - 0.5, -0.5)
    right.set_xlim(0, max(list(totals.values()) + [1]) * 1.18)
    right.set_xlabel("CPU nodes")
    right.set_title("CPU nodes by reason", loc="right")
    right.grid(axis="y", visible=False)
    return svg_of(fig, "blockers", "Top CPU ops and CPU nodes by partitioner reason")


@styled
def plot_scaling(scaling: list[Scaling]) -> str:
    """Left: partition seconds against blocks on log-log axes, with the fitted power law. Right: the
    same sizes split by partitioner phase, each phase with its own fitted exponent."""
    import numpy as np

    fig = new_figure(10, 3.6)
    left, right = fig.subplots(1, 2)
    palette = ("#2f6db5", "#e07b39", "#6d8f3a", "#8e6bbf")
    for scale, colour in zip(scaling, palette, strict=False):
        sizes = sorted(scale.seconds)
        seconds = [scale.seconds[n] for n in sizes]
        left.plot(sizes, seconds, "o-", color=colour, label=f"{scale.machine} ({scale.label})", zorder=3,
                  linewidth=0.8, alpha=0.9)
        for n, s in zip(sizes, seconds, strict=True):
            parts = f" ({int(scale.partitions[n])} partitions)" if n in scale.partitions else ""
            left.annotate(f"{s:.2f} s{parts}", (n, s), textcoords="offset points", xytext=(7, -11),
                          fontsize=7.5, color="#333")
        for a, b, slope in local_slopes(scale.seconds):
            middle = (math.sqrt(a * b), math.sqrt(scale.seconds[a] * scale.seconds[b]))
            left.annotate(f"slope {slope:.2f}", middle, textcoords="offset points", xytext=(-8, 8),
                          ha="right", fontsize=7, color=colour, style="italic")
        k = scale.exponent
        if k is not None:
            logs = np.log(np.array(sizes, dtype=float)), np.log(np.array(seconds))
            intercept = float(logs[1].mean() - k * logs[0].mean())
            grid = np.geomspace(min(sizes), max(sizes), 20)
            left.plot(grid, np.exp(intercept) * grid**k, "--", color=colour, linewidth=1.4,
                      label=f"fit: seconds ∝ n^{k:.2f}")
            missing = [n for n in scale.sizes if n not in scale.seconds]
            if missing:
                ahead = np.geomspace(max(sizes), max(missing), 10)
                left.plot(ahead, np.exp(intercept) * ahead**k, ":", color=colour, linewidth=1.2,
                          label=f"extrapolated to {max(missing)} (not recorded yet)")
    left.set_xscale("log")
    left.set_yscale("log")
    sizes_all = sorted({n for s in scaling for n in s.sizes})
    left.set_xticks(sizes_all, [str(n) for n in sizes_all])
    from matplotlib.ticker import FuncFormatter, LogLocator

    left.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    left.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    left.minorticks_off()
    left.set_xlabel("Blocks(n): repeated blocks in the graph")
    left.set_ylabel("VulkanPartitioner.partition, CPU seconds")
    left.set_title("Partition time, log-log", loc="left")
    left.legend(fontsize=7.5, loc="upper left")
    scale = scaling[0]
    if not scale.phases:
        right.text(0.5, 0.5, "phase split not recorded", ha="center", transform=right.transAxes)
    phases = sorted(scale.phases, key=lambda p: -max(scale.phases[p].values()))
    sizes = sorted({n for values in scale.phases.values() for n in values})
    phase_colours = dict(zip(phases, ("#2f6db5", "#e07b39", "#6d8f3a", "#8e6bbf", "#7f7f7f"), strict=False))
    bottom = [0.0] * len(sizes)
    x = range(len(sizes))
    for phase in phases:
        values = [scale.phases[phase].get(n, 0.0) for n in sizes]
        k = fit_exponent(scale.phases[phase])
        label = phase + (f" (∝ n^{k:.2f})" if k is not None else "")
        right.bar(x, values, bottom=bottom, color=phase_colours[phase], width=0.6, label=label)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    for i, total in enumerate(bottom):
        right.text(i, total, f"{total:.2f} s", ha="center", va="bottom", fontsize=7.5)
    timed = [(i, scale.seconds[n]) for i, n in enumerate(sizes) if n in scale.seconds]
    if timed:  # the left plot's points, for scale: CPU seconds (median), not the record's wall seconds
        right.plot([i for i, _ in timed], [s for _, s in timed], "_", color="#1d2733", markersize=24,
                   markeredgewidth=1.6, label=f"{PARTITION_TIME.rsplit('.', 1)[1]} (left: CPU s, median)")
    right.set_xticks(list(x), [str(n) for n in sizes])
    right.set_xlabel("Blocks(n)")
    right.set_ylabel("wall seconds per phase (one run)")
    right.set_title(f"Phase split ({scale.machine})", loc="left")
    right.set_ylim(0, max(bottom + [s for _, s in timed] + [1e-9]) * 1.15)
    right.legend(fontsize=7.5, loc="upper left")
    right.grid(axis="x", visible=False)
    return svg_of(fig, "scaling", "Partition scaling, log-log with fitted exponent, and phase split")


def _tick_label(commit: str, releases: dict[str, str]) -> str:
    """One line (the labels are vertical, so neighbours never touch): ``v1.4.1 e4d02f41`` or the hash."""
    version = releases.get(commit[:8])
    return f"v{version} {commit[:8]}" if version else commit[:8]


def history_ticks(commits: list[tuple[str, int]], releases: dict[str, str], changes: tuple[int, ...] = (),
                  room: int = 5) -> list[int]:
    """The commits that may get an x label, most wanted first: every release, the last commit, the
    first, the commits where the chart changes, then the middle of the widest stretch without a label
    while one is at least twice ``len(commits) / room`` positions wide. :func:`fit_ticks` then drops
    from the end of this list whatever would still overlap once drawn."""
    count = len(commits)
    if not count:
        return []
    wanted = [i for i, (c, _) in enumerate(commits) if c[:8] in releases]
    wanted = list(dict.fromkeys(wanted + [count - 1, 0] + [i for i in changes if 0 <= i < count]))
    gap = max(1, math.ceil(count / room))
    while True:
        shown = sorted(wanted)
        width, start = max((b - a, a) for a, b in zip(shown, shown[1:] + [shown[-1]], strict=True))
        if width < 2 * gap:
            return wanted
        wanted.append(start + width // 2)


def fit_ticks(fig: Any, ax: Any, candidates: list[int], labels: dict[int, str],
              pad_px: float = 2.0) -> list[int]:
    """Label the ``candidates`` (most wanted first) whose drawn labels do not overlap a more wanted one.

    The labels are measured where matplotlib draws them (after the layout), and the check repeats
    until the kept set fits as laid out, so no two x labels ever overlap."""
    kept = list(candidates)
    for _ in range(4):
        ax.set_xticks(sorted(kept), [labels[i] for i in sorted(kept)])
        fig.draw_without_rendering()
        boxes = {i: text.get_window_extent().padded(pad_px)  # the figure's own renderer, laid out
                 for i, text in zip(sorted(kept), ax.get_xticklabels(), strict=True)}
        fitting: list[int] = []
        for i in kept:
            if not any(boxes[i].overlaps(boxes[j]) for j in fitting):
                fitting.append(i)
        if fitting == kept:
            return sorted(kept)
        kept = fitting
    ax.set_xticks(sorted(kept), [labels[i] for i in sorted(kept)])
    return sorted(kept)


@styled
def plot_commit_series(series: CommitSeries, commits: list[tuple[str, int]], releases: dict[str, str],
                       key: str) -> str:
    """A small step chart: CPU ops per commit (solid), Vulkan programs for probes (dashed), and a red
    cross where the workload was recorded but did not lower (the series stops there)."""
    fig = new_figure(3.3, 2.35)  # room for the vertical commit labels
    ax = fig.subplots()
    x = list(range(len(commits)))
    top = 1.0
    palette = ("#e07b39", "#b5485d", "#8e6bbf", "#6d8f3a")
    for (line, values), colour in zip(sorted(series.cpu_ops.items()), palette, strict=False):
        ys = [math.nan if v is None else v for v in values]
        ax.step(x, ys, where="mid", color=colour, linewidth=1.8, label=f"CPU ops · {line}")
        ax.plot(x, ys, "o", color=colour, markersize=3.5)
        top = max([top] + [v for v in values if v is not None])
    for line, values in sorted(series.programs.items()):
        ys = [math.nan if v is None else v for v in values]
        ax.step(x, ys, where="mid", color=DELEGATED, linewidth=1.2, linestyle="--",
                label=f"Vulkan programs · {line}")
        top = max([top] + [v for v in values if v is not None])
    older = {i for marks in series.older.values() for i in marks}
    for line, values in sorted(series.cpu_ops.items()):  # an older suite's points: hollow, never compared
        xs = [i for i in sorted(series.older.get(line, ())) if values[i] is not None]
        if xs:
            ax.plot(xs, [values[i] for i in xs], "o", color=OLDER, markerfacecolor="white", markersize=4.5,
                    markeredgewidth=1.2, label="older suite (not compared)")
    failed = sorted({i for marks in series.failures.values() for i in marks})
    for marks, colour, label in (([i for i in failed if i not in older], FAILED, "did not lower"),
                                 ([i for i in failed if i in older], OLDER, "did not lower (older suite)")):
        if marks:
            ax.plot(marks, [0] * len(marks), "x", color=colour, markersize=6, markeredgewidth=1.8,
                    clip_on=False, label=label)
    ax.set_xlim(-0.5, len(commits) - 0.5)
    ax.set_ylim(-0.3, top * 1.25 + 0.3)
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=4))
    ax.tick_params(axis="y", labelsize=7)
    ax.tick_params(axis="x", which="major", labelsize=6.5, labelrotation=90, labelcolor="#666")
    # Every commit gets a short mark under the axis, the labelled ones a longer (major) tick: one line of
    # markers, not a matplotlib Tick per commit (a Tick each made most of the site's build time).
    from matplotlib.markers import TICKDOWN

    ax.plot(x, [0] * len(x), linestyle="none", marker=TICKDOWN, markersize=2, markeredgewidth=0.8,
            color="#555", transform=ax.get_xaxis_transform(), clip_on=False)
    ax.grid(axis="x", visible=False)
    labels = {i: _tick_label(commit, releases) for i, (commit, _) in enumerate(commits)}
    shown = fit_ticks(fig, ax, history_ticks(commits, releases, series_changes(series)), labels)
    for i, text in zip(shown, ax.get_xticklabels(), strict=True):
        if commits[i][0][:8] in releases:
            text.set_color("#1d2733")
            text.set_fontweight("bold")
    return svg_of(fig, key, f"{series.kind} {series.name}: CPU ops per upstream commit")


def series_changes(series: CommitSeries) -> tuple[int, ...]:
    """The commits where a line of the chart changes value or starts failing (worth a label)."""
    changes: set[int] = set()
    for by_line in (series.cpu_ops, series.programs):
        for values in by_line.values():
            known = [(i, v) for i, v in enumerate(values) if v is not None]
            steps = zip(known, known[1:], strict=False)
            changes.update(i for (_, before), (i, after) in steps if before != after)
    for marks in series.failures.values():
        changes.update(i for i in marks if i - 1 not in marks)
    return tuple(sorted(changes))


@styled
def plot_step_limits(limits: list[StepLimit]) -> str:
    """One bar per device and runner and tracer setting, against the bisection cap (dashed)."""
    labels = [f"{s.device} · {s.runner} · tracer {s.tracer or '?'}" for s in limits]
    fig = new_figure(10, 0.8 + 0.32 * len(limits))
    ax = fig.subplots()
    y = range(len(limits))
    ax.barh(y, [s.limit for s in limits], color=[TRACER_COLOURS.get(s.tracer, "#7f7f7f") for s in limits],
            height=0.65)
    cap = max(s.cap for s in limits)
    ax.axvline(cap, color="#555", linestyle="--", linewidth=1)
    ax.text(cap, -0.75, f"cap {cap:,}", ha="right", va="bottom", fontsize=7.5, color="#555")
    for i, s in enumerate(limits):
        text = f"≥ {s.limit:,} (reached the cap)" if s.limit >= s.cap else f"{s.limit:,} steps"
        inside = s.limit > cap * 0.35
        ax.text(s.limit - cap * 0.01 if inside else s.limit + cap * 0.01, i, text, va="center",
                ha="right" if inside else "left", fontsize=7.5, color="white" if inside else "#333")
    ax.set_yticks(list(y), labels, fontsize=8)
    ax.set_ylim(len(limits) - 0.5, -1)
    ax.set_xlim(0, cap * 1.04)
    ax.set_xlabel("largest Many(n) that executes (2 dispatches per step)")
    ax.grid(axis="y", visible=False)
    return svg_of(fig, "steps", "Many(n) step limit per device, runner and tracer setting")


#: Ladder rung -> bar colour (best first).
RUNG_COLOURS = {"matches": "#2a9d8f", "runs": "#8ab17d", "loads": "#e9c46a", "lowered": "#f4a261",
                "not lowered": "#b0b0b0"}


@styled
def plot_ladder(counts: dict[str, dict[str, Counter[str]]]) -> str:
    """Per machine and runner, a stacked bar of how many stop at each rung of the ladder: policy entries
    on the left, probes (``probe/<name>`` rows) on their own axis at the right; the legend sits below
    the axes, so it covers no bar."""
    from matplotlib.ticker import MaxNLocator

    from vkbench.results.ladder import RUNGS as RUNG_NAMES

    labels = list(counts)
    kinds = [k for k in ("policy entries", "probes") if any(sum(counts[h][k].values()) for h in labels)]
    widest = {k: max(sum(counts[h][k].values()) for h in labels) for k in kinds}
    fig = new_figure(10, 1.1 + 0.36 * len(labels))
    axes = fig.subplots(1, len(kinds), sharey=True, squeeze=False,
                        width_ratios=[max(widest[k], 0.4 * max(widest.values()), 1) for k in kinds])[0]
    for ax, kind in zip(axes, kinds, strict=True):
        left = [0] * len(labels)
        for rung in RUNG_NAMES:
            widths = [counts[label][kind][rung] for label in labels]
            ax.barh(range(len(labels)), widths, left=left, color=RUNG_COLOURS[rung], height=0.65,
                    label=rung)
            for i, width in enumerate(widths):
                if width:
                    ax.text(left[i] + width / 2, i, str(width), ha="center", va="center", fontsize=7.5)
            left = [a + b for a, b in zip(left, widths, strict=True)]
        for i, total in enumerate(left):
            ax.annotate(f"of {total}", (total, i), xytext=(3, 0), textcoords="offset points", va="center",
                        fontsize=7.5, color="#555")
        ax.set_xlim(0, widest[kind] * 1.2)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # counts of entries, never 0.5
        ax.set_xlabel(kind)
        ax.set_title(kind[:1].upper() + kind[1:], loc="left")
        ax.grid(axis="y", visible=False)
    axes[0].set_yticks(range(len(labels)), labels, fontsize=8)
    axes[0].set_ylim(len(labels) - 0.5, -0.5)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncols=len(RUNG_NAMES), fontsize=8,
               title="the highest rung reached on Vulkan", title_fontsize=8)
    return svg_of(fig, "ladder", "Policy entries and probes per ladder rung, per machine and runner")
