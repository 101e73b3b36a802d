"""``bugs.html``: the bug list (:mod:`vkbench.results.bug_rows`) as a page of the offline site.

One table row per distinct failure: where it happens, the normalized error, its owner, the entries it
blocks (and what a workaround reaches), its probe (with the rung the runtime ladder records for it),
its standalone reproducer and the build that reproducer needs, and the commits where the probe's record
turns. Plain HTML with inline CSS, like the coverage page: nothing is fetched.
"""

from __future__ import annotations

import html
import re
from typing import Any

from vkbench.results.bug_rows import (
    PERFORMANCE,
    UPSTREAM,
    BugRow,
    RuntimeDates,
    owner_counts,
    runtime_summary,
)
from vkbench.site.data import SiteData
from vkbench.site.page import Page
from vkbench.site.text import plural

#: Owner -> the colour of its badge (upstream owners warm, the rest grey/blue).
OWNER_COLOURS = {
    "ExecuTorch Vulkan partitioner": "#b5482b", "Vulkan runtime": "#8e2c6b",
    "exir/serialization": "#a86b00", "torch.export": "#7a5c00", "LeRobot model code": "#2d6a8e",
    "vkbench's own build of the policy": "#3f7d4a",
}

STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:13px;width:100%;table-layout:fixed}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:#f0f0f0}code{font-size:12px}td.id b{display:block;margin-bottom:.3em}
td.note{color:#555}small{color:#666}ul{margin:0;padding-left:1.1em}
.owner{display:inline-block;color:#fff;border-radius:3px;padding:0 .45em;margin-top:.3em}
.counts span{margin-right:1.2em;white-space:nowrap}
tr.upstream td.id{box-shadow:inset 4px 0 #c0392b}tr.fixed td{background:#eef8f1}
.kind{display:inline-block;border:1px solid #b5482b;color:#b5482b;border-radius:3px;padding:0 .4em;
margin-left:.4em;font-size:11px}
p.dates{border-left:3px solid #8e2c6b;padding:.3em .7em;background:#faf6f9}"""


def _owner(owner: str) -> str:
    colour = OWNER_COLOURS.get(owner, "#777")
    return f'<span class="owner" style="background:{colour}">{html.escape(owner)}</span>'


def _list(items: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>" if items else "—"


def _measured(item: dict[str, Any]) -> str:
    """One size of a performance row's what-if: CPU seconds and exports per partition, each side."""
    exports = ["/".join(map(str, item[f"exports_{side}"])) for side in ("as_shipped", "cache_working")]
    same = "" if item.get("same_partitions", True) else ", <b>partitions differ</b>"
    return (f"<code>Blocks({item['blocks']})</code>: {item['cpu_seconds_as_shipped']:.2f} s → "
            f"{item['cpu_seconds_cache_working']:.2f} s CPU per partition, {exports[0]} → {exports[1]} "
            f"exports <small>(median of {item['rounds']}){same}</small>")


def _what_if(item: dict[str, Any]) -> str:
    entry = f"<code>{html.escape(item['entry'])}</code>"
    if item.get("status") != "lowered":
        return f"{entry}: {html.escape(str(item.get('status')))}"
    allowed = item.get("allowed_on_cpu") or []
    with_op = f", with {', '.join(html.escape(op) for op in allowed)} on the CPU" if allowed else ""
    return (f"{entry}: lowers{with_op}, {item.get('cpu_percent', 0):.1f}% of {item.get('nodes_total')} nodes "
            f"on the CPU, {item.get('vulkan_programs')} Vulkan programs")


_URL = re.compile(r"\s*\(?https?://\S+")


def _run(machine: str, run: dict[str, Any]) -> str:
    """One recorded run of the reproducer: where, whether it showed the failure, with which build."""
    seen = ("reproduced" if run["reproduced"] else "NOT reproduced" if run.get("judged", True)
            else "could not tell (outputs not compared)")
    build = (f"executorch {str(run['executorch'])[:10]}, torch {run['torch']}" if run["executorch"]
             else run.get("runner") or "build not recorded")
    line = _URL.sub("", run["line"])  # the page links nowhere outside the site
    return (f'{html.escape(machine)}: <span title="{html.escape(line)}">{seen}</span> '
            f"<small>(exit {run['rc']}, {html.escape(run['date'][:10])}, {html.escape(build)})</small>")


def _cells(row: BugRow) -> list[str]:
    entries = _list([f"<code>{html.escape(e)}</code>" for e in row.entries])
    if row.kind == PERFORMANCE:
        entries = "blocks nothing: every partition pays it<br>"
        if row.what_if:
            entries += "<small>what-if, the cache working:</small>" + _list(
                [_measured(item) for item in row.what_if])
    elif row.what_if:
        entries += "<small>workaround:</small>" + _list([_what_if(item) for item in row.what_if])
    probe = f"probe <code>{html.escape(row.probe)}</code>" if row.probe else "no probe"
    if row.probe_rungs:
        probe += _list([f"{html.escape(where)}: {html.escape(rung)}"
                        for where, rung in row.probe_rungs.items()])
    repro = (f"<code>{html.escape(row.repro)}</code><br><small>needs {html.escape(row.build)}</small>"
             if row.repro else "no reproducer")
    if row.repro_runs:
        repro += _list([_run(machine, run) for machine, run in row.repro_runs.items()])
    if row.repro_agree is not None:
        told = sum(1 for run in row.repro_runs.values() if run.get("judged", True))
        repro += (f"<small>{told} machines agree</small>" if row.repro_agree
                  else '<small class="failed">the machines disagree</small>')
    error = html.escape(row.error)
    stored = sorted({_URL.sub("", line) for found in row.error_lines.values() for line in found.values()})
    if stored:  # the runtime's own lines, as the ladder stored them (entries and probe, every machine)
        error += "<br><small>stored by the ladder:</small>" + _list(
            [f"<code>{html.escape(line)}</code>" for line in stored])
    commits = (("first bad", row.first_bad), ("last good", row.last_good), ("fixed in", row.fixed_in))
    turns = [f"{label} {html.escape(commit)}" for label, commit in commits if commit]
    history = "<br>".join(turns) or "—"
    if row.history:
        history += f"<br><small>{html.escape(row.history)}</small>"
    kind = f'<span class="kind">{html.escape(row.kind)}</span>' if row.kind == PERFORMANCE else ""
    return [f'<td class="id" id="{html.escape(row.id)}"><b>{html.escape(row.id)}</b>{html.escape(row.stage)}'
            f"{kind}<br>{_owner(row.owner)}</td>", f"<td>{error}</td>", f"<td>{entries}</td>",
            f"<td>{probe}<br>{repro}</td>", f"<td>{history}</td>",
            f'<td class="note">{html.escape(row.note) or "—"}</td>']


def _fixed(row: BugRow) -> bool:
    """Fixed everywhere the history reads: neither open at its newest commit nor still open on main."""
    return bool(row.fixed_in) and not row.fixed_in.startswith("open at") and not row.open_on_main


def dates_note(dates: RuntimeDates | None) -> str:
    """The runtime rows' dates in a sentence (README says the same), with the rows and commits behind it."""
    if dates is None or not dates.rows:
        return ""
    commits = ", ".join(f"<code>{html.escape(c)}</code>" for c in dates.commits) or "none"
    return (f'<p class="dates"><b>Runtime dates:</b> {html.escape(dates.sentence())} '
            f"(probe ladders at {dates.ladder_commits}, the reproducers at {dates.reproducer_commits}, of "
            f"{dates.classes} runtime classes <code>{html.escape(dates.range)}</code>: {commits}). A row "
            f"that predates the range reads &ldquo;before {html.escape(dates.range_start)}&rdquo;: it "
            "already fails at the range's base, so its first bad commit is older; one open at the newest "
            "recorded runtime commit still fails there, so its fix, if any, is newer.</p>")


def render(rows: list[BugRow], source: str = "", dates: RuntimeDates | None = None) -> str:
    """The whole page for ``rows`` (``source``: the policies file the lowering rows were read from;
    ``dates``: what the runtime rows' dates amount to, :func:`~vkbench.results.bug_rows.runtime_summary`)."""
    counts = owner_counts(rows)
    upstream = [row for row in rows if row.owner in UPSTREAM]
    covered = sum(1 for row in upstream if row.probe and row.repro)
    summary = "".join(f"<span>{_owner(owner)} {count}</span>" for owner, count in counts.items())
    body = "".join(
        f'<tr class="{"upstream" if row.owner in UPSTREAM else "other"} {html.escape(row.kind)}'
        f'{" fixed" if _fixed(row) else ""}">'
        + "".join(_cells(row)) + "</tr>" for row in rows)
    where = f" (lowering: <code>results/policies/{html.escape(source)}</code>)" if source else ""
    slow = [row for row in rows if row.kind == PERFORMANCE]
    kinds = plural(len(slow), "row is a <b>performance</b> row", "rows are <b>performance</b> rows")
    performance = (f" {kinds}"
                   ": nothing fails, a stage does needless work; first bad and fixed in are stated, checked "
                   "in the ExecuTorch history, and the measured what-if is shown." if slow else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>vkbench: bug list</title>
<style>{STYLE}</style></head><body>
<p><a href="index.html">&larr; vkbench dashboard</a> · <a href="runtime.html">runtime</a> ·
<a href="coverage.html">coverage</a></p>
<h1>Bug list: every distinct failure, its owner, probe and reproducer</h1>
<p>{len(rows)} rows: one per failure (stage and normalized error) recorded in the committed results{where}
and on the runtime ladder. <b>{covered} of {len(upstream)}</b> rows owned by ExecuTorch or torch carry both
a probe (tracked per commit by the suite and on the runtime ladder) and a reproducer (a short file that
imports only torch and executorch: <code>python repro/&lt;id&gt;.py</code>, exit 0 when the failure
reproduces). First bad / fixed in come from the probe's recorded commits (main in the order of its
classes, releases by date); an empty first bad means the failure is older than the recorded range. A fix
that landed on a release branch only says so, and where main stands at its newest recorded commit.
{performance}</p>
{dates_note(dates)}
<p class="counts">{summary}</p>
<table><colgroup><col style="width:15%"><col style="width:20%"><col style="width:21%">
<col style="width:18%"><col style="width:10%"><col style="width:16%"></colgroup>
<thead><tr><th>row, stage, owner</th><th>error</th><th>entries blocked (and a workaround's coverage)</th>
<th>probe (its ladder rung) and reproducer</th><th>history</th><th>note</th></tr></thead>
<tbody>{body}</tbody></table>
<p><small>Generated by <code>vkbench.site.bugs_page</code> from <code>vkbench.results.bug_rows</code>;
<code>vkbench bugs --json</code> prints the same rows.</small></p>
</body></html>
"""


def page_html(data: SiteData) -> str:
    """``bugs.html``: the publish's bug rows, naming the survey their lowering rows come from."""
    survey = data.recorded.survey
    return render(data.bugs, survey.name if survey else "", runtime_summary(data.bugs, data.recorded))


PAGE = Page("bugs.html", "Bug list", "each distinct failure: owner, blocked entries, probe, reproducer",
            page_html, lambda data: plural(len(data.bugs), "row"))
