"""``runtime.html``: the Vulkan runtime results, side by side per machine.

asv's own graphs show each runtime benchmark per machine and commit; what
asv cannot show is the comparison users ask for first: for one release, how
far ``Many(n)`` gets and how fast on each device and tracer setting. This
page reads the asv result files of the releases (``<results root>/releases/<machine>/``, through
:class:`~vkbench.site.data.SiteData`) of every machine with runtime results and tabulates, per
machine, the step limit (from ``track_steps_short_of_cap``: limit = cap - value) and, per n,
execute time, µs per dispatch and max abs difference against eager; the policy
ladder; the runtime machines of ``<results root>/upstream/`` over the commits they recorded (rungs and
step limits per commit, :mod:`vkbench.site.runtime_history`); plus runs recorded outside asv
(``<results root>/runtime/policy-latency-*.json``: lavapipe with the tracer ON, which no asv machine
holds). ``vkbench runtime`` prints the release tables (:func:`vkbench.cli.runtime.runtime_tables`).
"""

from __future__ import annotations

import html
import math
from collections import Counter
from typing import Any

from vkbench.execution.outcome import LADDER_HEADERS, ladder_rows
from vkbench.results.runtime_timeline import MachineTimeline
from vkbench.site.data import SiteData
from vkbench.site.page import Page
from vkbench.site.runtime_history import STYLE as HISTORY_STYLE
from vkbench.site.runtime_history import section as history_section
from vkbench.site.runtime_rows import PROBE_PREFIX, RUNNER_LABELS, default_cap, many_labels
from vkbench.site.text import plural


def _has_value(result: Any) -> bool:
    if result is None:
        return False
    values = result if isinstance(result, list) else [result]
    return any(v is not None and not (isinstance(v, float) and math.isnan(v)) for v in values)


def _fmt(label: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if "µs" in label:
        return f"{value:.2f}"
    if "diff" in label:
        return f"{value:.3g}"
    return f"{value * 1e3:.2f} ms"


def render(rows: list[dict[str, Any]], policy_tables: list[tuple[str, list[Any]]],
           history: list[MachineTimeline] | None = None) -> str:
    """The page: the releases' tables, then ``history`` (``results/upstream``'s runtime machines over
    commits, :mod:`vkbench.site.runtime_history`), then the policy runs outside asv."""
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
             "<title>vkbench: Vulkan runtime</title>",
             "<style>body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
             "table{border-collapse:collapse;margin:.5em 0 1.5em}"
             "td,th{border:1px solid #ccc;padding:.2em .6em;"
             f"text-align:right}}th{{background:#f4f4f4}}{HISTORY_STYLE}</style></head><body>",
             "<h1>Vulkan runtime: <code>Many(n)</code> step limits and latency</h1>",
             "<p><code>Many(n)</code> is <code>x*1.0001+0.001</code> n times: 2 dispatches per step in one "
             "Vulkan delegate. The step limit is the largest n that executes (cap − asv's "
             "<code>track_steps_short_of_cap</code>). Numbers are read from the committed asv results; "
             "<a href='#upstream'>over upstream commits</a> below; <a href='index.html'>back</a>.</p>"]
    if not rows:
        parts.append("<p>No runtime results recorded yet.</p>")
    parts.append("<h2>Step limits</h2><table><tr><th>machine</th><th>commit</th><th>runner</th>"
                 "<th>step limit</th><th>cap</th></tr>")
    for row in rows:
        for runner, limit in row["limits"].items():
            parts.append(f"<tr><td>{html.escape(row['machine'])}</td><td>{row['commit']}</td>"
                         f"<td>{runner}</td><td>{limit['limit']:.0f}</td><td>{limit['cap']:.0f}</td></tr>")
    parts.append("</table>")
    for row in rows:
        labels = [label for label in many_labels()
                  if any(_has_value(values.get(label)) for values in row["many"].values())]
        if not labels:
            continue  # a machine with ladder records only (the H100): no Many(n) table to draw
        where = f"{row['cpu']}, " if row["cpu"] else ""
        parts.append(f"<h2>{html.escape(row['machine'])} <small>({html.escape(where)}"
                     f"commit {row['commit']})</small></h2><table><tr><th>n</th>"
                     + "".join(f"<th>{html.escape(label)}</th>" for label in labels) + "</tr>")
        for n in sorted(row["many"]):
            cells = "".join(f"<td>{_fmt(label, row['many'][n].get(label))}</td>" for label in labels)
            parts.append(f"<tr><td>{n}</td>{cells}</tr>")
        parts.append("</table>")
    headers, ladder = ladder_table(rows)
    if ladder:
        parts.append("<h2>How far each policy entry and probe gets on Vulkan</h2>"
                     f"<p class='ladder-headline'><b>{html.escape(ladder_headline(headers, ladder))}</b></p>"
                     "<p>The ladder of ExecuTorch's backend "
                     "tests: lowered → the program loads → it runs → its output matches eager PyTorch "
                     "(SNR ≥ 40 dB); asv's <code>PolicyLadder.track_rungs_short</code>. Rows named "
                     "<code>probe/…</code> are probes (<code>ProbeLadder</code>), listed after the "
                     "policy entries and counted apart.</p><table><tr>"
                     + "".join(f"<th>{html.escape(h)}</th>" for h in headers) + "</tr>")
        for item in ladder:
            parts.append("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in item) + "</tr>")
        parts.append("</table>")
    parts.append(history_section(history or [], default_cap(), RUNNER_LABELS))
    recorded = policy_rows(rows)
    if recorded:
        parts.append("<h2>Policy forward latency (asv)</h2><table><tr><th>machine</th><th>runner</th>"
                     "<th>entry</th><th>backend</th><th>forward (median)</th><th>max abs diff</th></tr>")
        for item in recorded:
            parts.append("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in item) + "</tr>")
        parts.append("</table>")
    for name, outcomes in policy_tables:
        parts.append(f"<h2>Policy runs outside asv: {html.escape(name)}</h2><table><tr>"
                     + "".join(f"<th>{html.escape(k)}</th>" for k in LADDER_HEADERS) + "</tr>")
        for item in ladder_rows(outcomes):
            parts.append("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in item) + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def page_html(data: SiteData) -> str:
    """``runtime.html``: the runtime rows of the releases, the runtime machines of the upstream results
    over commits, and the policy runs outside asv."""
    return render(data.runtime_rows, data.policy_runs, data.runtime_history)


PAGE = Page("runtime.html", "Vulkan runtime", "Many(n) step limits, execute time, µs per dispatch", page_html,
            lambda data: plural(len(data.runtime_rows), "result set"))


def table_rows(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """Step-limit rows and per-n rows, formatted, for the CLI and docs/runtime.md."""
    limit_rows = [[row["machine"], row["commit"], runner, str(limit["limit"]), str(limit["cap"])]
                  for row in rows for runner, limit in row["limits"].items()]
    labels = [label for label in many_labels()
              if any(_has_value(values.get(label)) for row in rows for values in row["many"].values())]
    many_rows = [[row["machine"], str(n)] + [_fmt(label, row["many"][n].get(label)) for label in labels]
                 for row in rows for n in sorted(row["many"])]
    return labels, limit_rows, many_rows


def ladder_table(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Entry × (machine, runner): the rung each reached (``—``: not recorded there)."""
    columns = [(row["machine"], runner) for row in rows for runner in sorted({r for r, _ in row["ladder"]})]
    entries = sorted({entry for row in rows for _, entry in row["ladder"]}, key=lambda e: (is_probe(e), e))
    by_machine = {row["machine"]: row["ladder"] for row in rows}
    table = [[entry] + [by_machine[machine].get((runner, entry), "—") for machine, runner in columns]
             for entry in entries]
    return ["entry"] + [f"{machine} ({runner})" for machine, runner in columns], table


def is_probe(entry: str) -> bool:
    """Ladder rows named ``probe/<name>`` are probes (``ProbeLadder``), not policy entries."""
    return entry.startswith(PROBE_PREFIX)


def ladder_counts(headers: list[str], table: list[list[str]]) -> dict[str, dict[str, Counter[str]]]:
    """Per ladder column: rung -> how many reached it, ``policy entries`` and ``probes`` apart
    (``—``, not recorded there, counts in neither)."""
    counts = {}
    for i, header in enumerate(headers[1:], start=1):
        kinds: dict[str, Counter[str]] = {"policy entries": Counter(), "probes": Counter()}
        for row in table:
            if row[i] != "—":
                kinds["probes" if is_probe(row[0]) else "policy entries"][row[i]] += 1
        counts[header] = kinds
    return counts


def ladder_headline(headers: list[str], table: list[list[str]]) -> str:
    """How many policy entries match eager in the best column, and, apart, how many probes do there."""
    counts = ladder_counts(headers, table)
    if not counts:
        return "No policy ladder recorded yet."
    kind = "policy entries" if any(sum(c["policy entries"].values()) for c in counts.values()) else "probes"
    best = max(counts, key=lambda h: (counts[h][kind]["matches"], counts[h][kind]["runs"],
                                      counts[h]["probes"]["matches"]))
    parts = [f"{counts[best][k]['matches']} of {sum(counts[best][k].values())} {k}"
             for k in ("policy entries", "probes") if sum(counts[best][k].values())]
    first, *rest = parts
    return (f"{first} match eager PyTorch on Vulkan ({best})"
            + "".join(f"; {part} match" for part in rest))


def policy_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    """machine, runner, entry, backend, forward, max abs diff (asv results of the policy classes)."""
    out = []
    for row in rows:
        for (runner, entry, backend), values in sorted(row["policies"].items()):
            out.append([row["machine"], runner, entry, backend, _fmt("forward", values.get("forward")),
                        _fmt("max abs diff", values.get("max abs diff"))])
    return out
