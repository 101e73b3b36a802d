"""``changes.html``: one event per commit (what moved, why, whether it reproduced), every commit's class.

The page is the site's form of ``vkbench changes`` (:mod:`vkbench.results.events`, computed once per
publish into :class:`~vkbench.site.data.SiteData`): regressing events first, each with its commit,
subject and PR, the lowering inputs it changed, every affected benchmark and entry with before → after
(the release line's repeats of it included), each reason once, what the stored re-measurement of both
sides found, and one command reproducing it (a runtime machine's rung steps are events too, with
their machine); then the classes of the range, so any commit can be looked
up as "same lowering inputs as <commit>". Rows recorded before each value carried its suite's digest
are marked *older suite*; the steps left out (the suite changed in between, a timing nothing confirms)
and those dropped (re-measured, not reproduced) are counted above the events, so no such step reads as
a change of ExecuTorch. Offline: inline CSS only, no scripts, no external links.
"""

from __future__ import annotations

import html

from vkbench.commits.classes import Classes
from vkbench.results.changes import (
    OLDER,
    OLDER_SUITE,
    OLDER_SUITE_CHANGED,
    SUITE_CHANGED,
    TIMING_NOT_CONFIRMED,
    Change,
    Changes,
    Event,
)
from vkbench.site.data import SiteData
from vkbench.site.page import Page
from vkbench.site.text import plural

STYLE = ("body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1400px}"
         "table{border-collapse:collapse;margin:.5em 0 1em;font-size:.85em;width:100%;table-layout:fixed}"
         "td{overflow-wrap:anywhere}"
         "td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}"
         "th{background:#f4f4f4}section.event{border-left:4px solid #1b7f3b;padding:.2em 0 .2em 1em;"
         "margin:1.5em 0}section.event.regression{border-color:#b00020}"
         "h2.event{font-size:1.1em;margin:.2em 0}.kind{font-weight:600;color:#1b7f3b}"
         ".regression .kind{color:#b00020}ul.reasons{margin:.3em 0;padding-left:1.2em}"
         "ul.reasons li{overflow-wrap:anywhere}code{font-size:.95em}.muted{color:#777}"
         ".scroll{max-height:40em;overflow:auto}small{color:#555}p.meta{margin:.3em 0}")

#: Column widths (percent) of an event's steps: benchmark, param, values, where, confirmed.
WIDTHS = (30, 24, 14, 18, 14)


def _cell(text: object) -> str:
    return f"<td>{html.escape(str(text))}</td>"


def _where(change: Change) -> str:
    end = (change.recorded or change.commit)[:8]
    where = change.commit[:8] if change.exact else f"{change.previous[:8]}..{end} ({change.line})"
    return f"{where} on {change.machine}" if change.machine else where  # a runtime step: its machine


def _confirmed(change: Change) -> str:
    if change.confirmed is None:
        return "older suite: re-record" if change.suite == OLDER else "not yet"
    return "reproduced" if change.confirmed else "not reproduced"


def _step_row(change: Change) -> str:
    note = f"<br><small>{html.escape(change.note)}</small>" if change.note and not change.note.startswith(
        "not placed") else ""  # the event says it once
    return (f"<tr class='{'regression' if change.regression else 'improvement'}'>"
            f"{_cell(change.benchmark.split('.', 1)[1])}{_cell(change.param)}"
            f"{_cell(change.values('→'))}<td><code>{html.escape(_where(change))}</code>"
            f"{note}</td>{_cell(_confirmed(change))}</tr>")


def _event(event: Event) -> str:
    kind = "regression" if event.regression else "improvement"
    where = (f"<code>{event.commit[:8]}</code>" if event.exact else
             f"between <code>{event.previous[:8]}</code> and <code>{event.commit[:8]}</code> ({event.line})")
    subject = event.subject if event.pr is None or f"#{event.pr}" in event.subject else \
        f"#{event.pr} {event.subject}"
    parts = [f"<section class='event {kind}' id='event-{event.commit[:8]}'>",
             f"<h2 class='event'><span class='kind'>{kind}</span> {where} {html.escape(subject)}</h2>"]
    if event.files:
        parts.append(f"<p class='meta'>inputs changed: {html.escape(', '.join(event.files))}</p>")
    parts.append("<table><colgroup>" + "".join(f"<col style='width:{w}%'>" for w in WIDTHS) + "</colgroup>"
                 "<tr><th>benchmark</th><th>param</th><th>before → after</th><th>where</th>"
                 "<th>confirmed</th></tr>" + "".join(_step_row(r) for r in event.rows) + "</table>")
    if event.reasons:
        parts.append("<p class='meta'>why:</p><ul class='reasons'>"
                     + "".join(f"<li>{html.escape(r)}</li>" for r in event.reasons) + "</ul>")
    for note in event.notes:
        parts.append(f"<p class='meta'><b>{html.escape(note)}</b></p>")
    if event.repeated_on:
        spans = html.escape(", ".join(event.repeated_on))
        parts.append(f"<p class='meta'>also on the release line: {spans}</p>")
    parts.append(f"<p class='meta'>confirmation: {html.escape(event.confirmation or '-')}</p>"
                 f"<p class='meta'>reproduce: <code>{html.escape(event.repro)}</code></p></section>")
    return "\n".join(parts)


def _counts(table: Changes) -> str:
    """Which steps are reported, which dropped, which left out and why."""
    counts = table.left_out_counts()
    regressing = sum(1 for e in table.events if e.regression)
    return (f"<p><b>{len(table.events)} events ({regressing} regressing), {len(table.changes)} steps</b>: "
            f"{len(table.upstream)} recorded by one suite on both sides (the same digest of the vkbench code "
            f"the record runs, as the benchmark's asv version), {len(table.older)} by an older suite, before "
            "that digest existed: re-record both sides to confirm them. "
            f"<b>{len(table.dropped)} dropped</b>: re-measured on both sides, back to back, and not "
            f"reproduced. <b>{sum(counts.values())} left out</b>: {counts[SUITE_CHANGED]} with differing "
            f"suite versions, {counts[OLDER_SUITE_CHANGED]} older records of which one side was written by a "
            f"vkbench that stored no provenance, {counts[OLDER_SUITE]} between two records of an older suite "
            "(made before the digest existed: drawn, never compared; re-record both sides), "
            f"{counts[TIMING_NOT_CONFIRMED]} timing steps that neither "
            "the partitioner's deterministic work count nor an interleaved re-measurement confirms.</p>")


def render(table: Changes, classes: Classes | None) -> str:
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>vkbench: changes</title>"
             f"<style>{STYLE}</style></head><body>",
             "<h1>What changed, where, and why</h1>",
             "<p>One event per commit across the recorded upstream commits. A step whose two recorded "
             "neighbours sit in adjacent classes (runs of commits with byte-identical lowering inputs) is on "
             "its commit exactly; otherwise the event names the range. A release tag's steps are told with "
             "the main-line event they repeat. A failure is the value <i>failed</i>, with the stored stage "
             "and first error line. A runtime step (a ladder point's rung, lowered → loads → runs → "
             "matches, between two neighbouring records of one runtime machine, placed by the runtime "
             "classes) is told the same way, with its machine and the runtime's stored error line. "
             "<a href='index.html'>Back to the dashboard</a>.</p>",
             _counts(table)]
    parts += [_event(e) for e in table.events]
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


def page_html(data: SiteData) -> str:
    """``changes.html``: the publish's changes table and the classes of the recorded range."""
    return render(data.changes, data.recorded.classes)


PAGE = Page("changes.html", "Changes", "one event per commit: what stepped, why, whether it was confirmed",
            page_html, lambda data: f"{plural(len(data.changes.events), 'event')}, "
                                    f"{plural(len(data.changes.changes), 'step')}")
