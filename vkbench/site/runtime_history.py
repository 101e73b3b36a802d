"""The runtime page's history section: each runtime machine's record over upstream commits.

The release tables above it answer "how far does the runtime get at this release"; this section
answers "since when": per runtime machine of ``results/upstream``
(:class:`~vkbench.results.runtime_timeline.MachineTimeline`, read once into
:class:`~vkbench.site.data.SiteData`), a grid of every ladder point's rung over the recorded commits
in first-parent order (each commit with its short hash and runtime class; the stored error line on
hover, the newest one in the last column; a cell whose rung differs from the previous recorded commit
of the first-parent line is framed: a step that ``changes.html`` tells as an event), and the step
limits and µs per dispatch over the same commits where recorded, "not recorded" where not. Offline:
CSS only.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

from vkbench.results.ladder import RUNGS
from vkbench.results.runtime_timeline import Column, MachineTimeline, Rung

#: The section's CSS (the page's own table style applies too): one colour per rung, the steps framed.
STYLE = (".history td.rung{text-align:center;font-size:.85em;white-space:nowrap}"
         ".history .r0{background:#d7f0dc}.history .r1{background:#eef6d0}.history .r2{background:#fff1c2}"
         ".history .r3{background:#fcd9c4}.history .r4{background:#e6e6e6;color:#555}"
         ".history td.step{outline:2px solid #b00020;outline-offset:-2px;font-weight:600}"
         ".history td.na,.history td.none{color:#999;text-align:center}"
         ".history td.line{text-align:left;font-size:.8em;max-width:44em;overflow-wrap:anywhere}"
         ".history td.name{text-align:left;white-space:nowrap}.history .scroll{overflow-x:auto}"
         ".history th small{font-weight:normal;color:#555}.history th{text-align:center}"
         ".history th:first-child{text-align:left}")
NOT_RECORDED = "not recorded"


def _head(columns: list[Column], last: str = "") -> str:
    """One column per commit: its short hash over its runtime class (full hash and subject on hover)."""
    cells = []
    for c in columns:
        title = html.escape(c.commit + (f": {c.subject}" if c.subject else ""))
        where = html.escape(c.label.split(", ", 1)[1])
        cells.append(f"<th title='{title}'><code>{c.commit[:8]}</code><br><small>{where}</small></th>")
    return f"<tr><th>point</th>{''.join(cells)}{f'<th>{last}</th>' if last else ''}</tr>"


def _rung_cell(rung: Rung | None, step: bool) -> str:
    if rung is None:
        return f"<td class='na' title='{NOT_RECORDED} at this commit'>·</td>"
    step = " step" if step else ""
    why = f": {rung.reason}" if rung.reason else ""
    return f"<td class='rung r{rung.missed}{step}' title='{html.escape(rung.name + why)}'>{rung.name}</td>"


def _rung_rows(timeline: MachineTimeline, runner_labels: Mapping[str, str]) -> list[str]:
    rows = []
    steps = {(key, current.commit) for key, _, current in timeline.steps()}
    points = sorted(timeline.rungs, key=lambda key: (key[1].startswith("probe/"), key[1], key[2]))
    for key in points:
        _, entry, runner = key
        by_commit, newest = timeline.rungs[key], ""
        cells = []
        for column in timeline.columns:
            rung = by_commit.get(column.commit)
            cells.append(_rung_cell(rung, (key, column.commit) in steps))
            if rung is not None:
                newest = rung.reason
        label = f"{entry} <small>({html.escape(runner_labels.get(runner, runner))})</small>"
        rows.append(f"<tr><td class='name'>{label}</td>{''.join(cells)}"
                    f"<td class='line'>{html.escape(newest) or '—'}</td></tr>")
    return rows


def _value_row(label: str, columns: list[Column], values: Mapping[str, float], shown: str) -> str:
    cells = "".join(f"<td>{shown.format(values[c.commit])}</td>" if c.commit in values else
                    f"<td class='none'>{NOT_RECORDED}</td>" for c in columns)
    return f"<tr><td class='name'>{html.escape(label)}</td>{cells}</tr>"


def _limit_rows(timeline: MachineTimeline, cap: int, runner_labels: Mapping[str, str]) -> list[str]:
    """Step limits (cap - asv's ``track_steps_short_of_cap``) and µs per dispatch over the commits; one
    "not recorded" row for a quantity no commit of this machine holds."""
    columns = timeline.columns
    limits = [_value_row(f"step limit ({runner_labels.get(runner, runner)}, cap {cap})", columns,
                         {c: cap - short for c, short in by_commit.items()}, "{:.0f}")
              for runner, by_commit in sorted(timeline.short_of_cap.items())]
    dispatch = [_value_row(f"µs per dispatch, n = {n} ({runner_labels.get(runner, runner)})", columns,
                           by_commit, "{:.2f}")
                for (runner, n), by_commit in sorted(timeline.per_dispatch.items())]
    return ((limits or [_value_row("step limit (StepLimit)", columns, {}, "")])
            + (dispatch or [_value_row("µs per dispatch (ManyRuntime)", columns, {}, "")]))


def section(timelines: list[MachineTimeline], cap: int, runner_labels: Mapping[str, str]) -> str:
    """The history section of ``runtime.html`` (one block per runtime machine of ``results/upstream``)."""
    legend = " · ".join(f"<span class='r{i}'>&nbsp;{name}&nbsp;</span>" for i, name in enumerate(RUNGS))
    parts = ["<section class='history'><h2 id='upstream'>Over upstream ExecuTorch commits "
             "(<code>results/upstream</code>)</h2>",
             "<p>Each runtime machine's ladder points (lowered → loads → runs → matches, or not lowered) and "
             "step limits over the upstream commits it recorded, in first-parent order; a commit's record "
             "answers every commit of its <i>runtime class</i> (identical runtime build inputs, "
             "<code>results/history/classes-runtime.json</code>). Hover a cell for the stored error line; a "
             "framed cell differs from the previous recorded commit: an event on "
             "<a href='changes.html'>changes.html</a>, or a step counted as left out there where the suite "
             f"changed in between. Rungs: {legend}.</p>"]
    if not timelines:
        parts.append("<p>No runtime machine has recorded an upstream commit yet.</p></section>")
        return "\n".join(parts)
    for timeline in timelines:
        commits, steps = len(timeline.columns), len(timeline.steps())
        said = ("one commit recorded: no neighbours to compare yet" if commits == 1 else
                f"{commits} commits recorded, {steps} rung step{'s' if steps != 1 else ''} between "
                "neighbours")
        rungs = "".join(_rung_rows(timeline, runner_labels))
        head = _head(timeline.columns, "stored line (newest)")
        ladder = ("<div class='scroll'><table class='rungs'>" + head
                  + rungs + "</table></div>") if rungs else "<p>No ladder recorded on this machine.</p>"
        parts.append(f"<h3>{html.escape(timeline.machine)} <small>({said})</small></h3>" + ladder
                     + "<h4>Step limits over commits</h4><div class='scroll'><table class='limits'>"
                     + _head(timeline.columns) + "".join(_limit_rows(timeline, cap, runner_labels))
                     + "</table></div>")
    parts.append("</section>")
    return "\n".join(parts)
