"""``changes.html``: every step of a recorded count, the commit that caused it, and every commit's class.

The page is the site's form of ``vkbench changes`` (:mod:`vkbench.results.changes`, the table computed
once per publish into :class:`~vkbench.site.data.SiteData`):
regressions first, then improvements, each with the reasons before and after
and the command that reproduces it; below, the classes of the range, so any
commit can be looked up as "same lowering inputs as <commit>". Rows recorded before each value
carried its suite's digest are marked *older suite*, and the steps left out because vkbench's own
suite changed between the two sides are counted above the table, so no such step reads as a change
of ExecuTorch. Offline: inline CSS only, no scripts, no external links.
"""

from __future__ import annotations

import html
from pathlib import Path

from vkbench.commits.classes import Classes
from vkbench.results.changes import OLDER, OLDER_SUITE_CHANGED, SUITE_CHANGED, Change, Changes
from vkbench.site.data import SiteData

STYLE = ("body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1400px}"
         "table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.85em;width:100%;table-layout:fixed}"
         "td{overflow-wrap:anywhere}"
         "td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}"
         "th{background:#f4f4f4;position:sticky;top:0}tr.regression td:first-child{color:#b00020}"
         "tr.improvement td:first-child{color:#1b7f3b}code{font-size:.95em}.muted{color:#777}"
         ".scroll{max-height:40em;overflow:auto}small{color:#555}")


#: Column widths (percent) of the changes table: kind, benchmark, param, values, commit, inputs,
#: reason before, reason after, reproduce.
WIDTHS = (9, 13, 10, 7, 11, 10, 13, 14, 13)


def _cell(text: object) -> str:
    return f"<td>{html.escape(str(text))}</td>"


def _change_row(change: Change) -> str:
    kind = "regression" if change.regression else "improvement"
    where = (f"<code>{change.commit[:8]}</code>" if change.exact else
             f"between <code>{change.previous[:8]}</code> and <code>{change.commit[:8]}</code>")
    subject = change.subject if change.pr is None or f"#{change.pr}" in change.subject else \
        f"#{change.pr} {change.subject}"
    files = ", ".join(change.files[:4]) + (f" (+{len(change.files) - 4})" if len(change.files) > 4 else "")
    if change.suite == OLDER:
        kind += " (older suite: re-record to confirm)"
    return (f"<tr class='{kind.split()[0]}'>{_cell(kind)}{_cell(change.benchmark.split('.', 1)[1])}"
            f"{_cell(change.param)}"
            f"{_cell(f'{change.before} → {change.after}')}<td>{where}<br><small>{html.escape(subject)}"
            f"</small></td>{_cell(files or '-')}{_cell(change.reason_before or '-')}"
            f"{_cell(change.reason_after or '-')}<td><code>{html.escape(change.repro)}</code></td></tr>")


def _suites(table: Changes) -> str:
    """Which rows are upstream changes, which an older suite's, and the steps left out."""
    counts = table.left_out_counts()
    return (f"<p>{len(table.upstream)} upstream changes (both sides recorded by one suite: the same digest "
            f"of the vkbench code the record runs, as the benchmark's asv version); {len(table.older)} rows "
            "recorded by an older suite, before that digest existed: re-record both sides to confirm them. "
            f"{sum(counts.values())} steps are left out, because vkbench's own suite changed between the two "
            f"sides: {counts[SUITE_CHANGED]} with differing versions, {counts[OLDER_SUITE_CHANGED]} older "
            "records of which one side was written by a vkbench that stored no provenance.</p>")


def render(table: Changes, classes: Classes | None) -> str:
    regressions = [c for c in table.changes if c.regression]
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>vkbench: changes</title>"
             f"<style>{STYLE}</style></head><body>",
             "<h1>What changed, where, and why</h1>",
             f"<p><b>{len(regressions)} regressions, {len(table.changes) - len(regressions)} improvements"
             "</b> across the recorded upstream commits. A step whose two recorded neighbours sit in "
             "adjacent classes (runs of commits with byte-identical lowering inputs) is on its commit "
             "exactly; otherwise the row names the range. A failure is the value <i>failed</i>, with "
             "the stored stage and first error line. <a href='index.html'>Back to the dashboard</a>.</p>",
             _suites(table),
             "<table><colgroup>" + "".join(f"<col style='width:{w}%'>" for w in WIDTHS) + "</colgroup>"
             "<tr><th>kind</th><th>benchmark</th><th>param</th><th>before → after</th>"
             "<th>commit</th><th>inputs changed</th><th>reason before</th><th>reason after</th>"
             "<th>reproduce</th></tr>"]
    parts += [_change_row(c) for c in table.changes]
    parts.append("</table>")
    if classes is not None:
        measured = {c["commit"]: c["measured_as"] for c in table.commits}
        total = sum(len(c.commits) for c in classes.classes)
        answered = sum(1 for commit in measured.values() if commit)
        parts.append(f"<h2>Every commit of <code>{html.escape(classes.range)}</code>: {total} commits in "
                     f"{len(classes.classes)} classes</h2><p>{answered} commits are answered by a recorded "
                     "commit of their class (same lowering inputs, so the same counts); timings are never "
                     "copied onto a commit that did not run them.</p><div class='scroll'><table><tr>"
                     "<th>class</th><th>first commit</th><th>commits</th><th>same lowering inputs as</th>"
                     "<th>base wheel</th><th>inputs changed</th><th>subject</th></tr>")
        for i, c in enumerate(classes.classes):
            recorded = measured.get(c.first)
            shown = f"<code>{recorded[:8]}</code>" if recorded else "<span class='muted'>not recorded</span>"
            members = f"{c.commits[0][:8]} … {c.commits[-1][:8]}" if len(c.commits) > 1 else c.first[:8]
            parts.append(f"<tr>{_cell(i)}<td><code>{c.first[:8]}</code></td>"
                         f"<td>{len(c.commits)} <small>({html.escape(members)})</small></td><td>{shown}</td>"
                         f"{_cell(c.base)}{_cell(', '.join(c.changed[:3]) or '-')}{_cell(c.subject)}</tr>")
        parts.append("</table></div>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write(html_root: Path, data: SiteData) -> Path:
    """Write ``changes.html``: the publish's changes table and the classes of the recorded range."""
    path = Path(html_root) / "changes.html"
    path.write_text(render(data.changes, data.recorded.classes))
    return path
