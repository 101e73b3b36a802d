"""The dashboard's HTML: a section per topic (headline, inline SVG plot, note), tiles, navigation.

The CSS is inline and every plot is an inline ``<svg>``: the page loads nothing, from the network
or elsewhere.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from vkbench.results.bug_rows import BugRow
from vkbench.site.dashboard.headlines import (
    blockers_headline,
    pct,
    scaling_headline,
    share_headline,
    steps_headline,
    upstream_headline,
)
from vkbench.site.dashboard.plots import (
    DELEGATED,
    RUNG_COLOURS,
    plot_blockers,
    plot_commit_series,
    plot_ladder,
    plot_scaling,
    plot_share,
    plot_step_limits,
)
from vkbench.site.dashboard.views import (
    FUSABLE_PHASE,
    PARTITION_TIME,
    CommitSeries,
    EntryShare,
    Scaling,
    StepLimit,
    Survey,
    TorchStack,
    Upstream,
    load_ladder,
    load_pattern_bug,
    load_scaling,
    load_step_limits,
    load_survey,
    load_torch_stack,
    load_upstream,
)
from vkbench.site.data import SiteData
from vkbench.site.navigation import Link
from vkbench.site.page import Page
from vkbench.site.runtime_page import is_probe, ladder_counts, ladder_headline
from vkbench.site.text import plural


@dataclass
class Section:
    id: str
    kicker: str
    headline: str
    body: str


CSS = """
:root{--ink:#1d2733;--muted:#5b6673;--line:#e3e7ec;--accent:#2f6db5}
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);
background:#f5f7fa;line-height:1.45}
header{background:#17212e;color:#fff;padding:1.4em 2em 1.1em}
header h1{margin:0 0 .2em;font-size:1.5em;font-weight:650}
header p{margin:0;color:#b9c3cf}
header p.stack{margin-top:.35em;font-size:.85em;color:#93a1b1}
header p.stack code{color:#c9d3de}
nav{margin-top:.8em;display:flex;flex-wrap:wrap;gap:.4em 1.2em}
nav a{color:#9cc4f2;text-decoration:none;font-weight:600}nav a:hover{text-decoration:underline}
nav span{color:#8c98a6;font-weight:400;font-size:.85em}
main{max-width:1120px;margin:0 auto;padding:1.2em 1.5em 2em}
.tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(190px,1fr));gap:.8em;margin:.4em 0 1.2em}
.tile{background:#fff;border:1px solid var(--line);border-radius:10px;padding:.8em 1em}
.tile b{display:block;font-size:1.7em;line-height:1.1;color:var(--accent)}
.tile span{color:var(--muted);font-size:.85em}
section{background:#fff;border:1px solid var(--line);border-radius:12px;padding:1.1em 1.4em 1.2em;
margin:0 0 1.2em}
.kicker{margin:0;text-transform:uppercase;letter-spacing:.06em;font-size:.75em;font-weight:700;color:var(--muted)}
h2.headline{margin:.25em 0 .6em;font-size:1.2em;font-weight:600}
figure{margin:0}
svg.plot-svg{width:100%;height:auto;display:block}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:.6em}
.grid figure{border:1px solid var(--line);border-radius:8px;padding:.3em .3em 0}
figcaption{font-size:.85em;font-weight:600;padding:.1em .3em}
figcaption small{color:var(--muted);font-weight:400}
.note{color:var(--muted);font-size:.85em;margin:.5em 0 0}
.empty{color:var(--muted);font-style:italic;margin:0}
table{border-collapse:collapse;font-size:.82em;margin-top:.8em;width:100%}
th,td{border-bottom:1px solid var(--line);padding:.3em .5em;text-align:left;vertical-align:top}
th{color:var(--muted);font-weight:600;white-space:nowrap}td:first-child{white-space:nowrap}
.table-scroll{overflow:auto;max-height:30em;margin-top:.8em;border:1px solid var(--line);border-radius:8px}
.table-scroll table{margin-top:0}
.table-scroll thead th{position:sticky;top:0;background:#fff;box-shadow:inset 0 -1px var(--line)}
table.ladder th{white-space:normal;min-width:9em}
td.rung-matches{color:#1f7a6f;font-weight:600}td.rung-runs{color:#4f7a3f}td.rung-loads{color:#8a6d12}
td.rung-lowered{color:#a5581c}td.rung-not-lowered{color:#8a8f96}
tr.probe td:first-child{color:var(--muted)}
code{font-size:.92em}
.key{display:inline-block;width:1.6em;height:.25em;vertical-align:middle;margin:0 .3em 0 .8em}
footer{color:var(--muted);font-size:.8em;text-align:center;padding:0 1em 2em}
"""


def figure(svg: str, key: str, caption: str = "") -> str:
    cap = f"<figcaption>{caption}</figcaption>" if caption else ""
    return f'<figure class="plot" data-plot="{html.escape(key)}">{cap}{svg}</figure>'


def share_section(survey: Survey | None) -> Section:
    if survey is None or not survey.entries:
        return Section("share", "Vulkan share per policy", "No policy survey committed yet.",
                       '<p class="empty">Run <code>vkbench policies</code> to survey the policies.</p>')
    note = (f'<p class="note">From <code>results/policies/{html.escape(survey.source)}</code> '
            f"(ExecuTorch {html.escape(survey.version)}, {html.escape(survey.machine)}). Each entry is one "
            "exported graph of a policy; the CPU nodes are split by the first reason the Vulkan partitioner "
            "gave (dtype messages grouped by dtype). See <a href=\"coverage.html\">coverage</a> for every "
            "op and reason.</p>" + share_definitions(survey.entries))
    return Section("share", "Vulkan share per policy", share_headline(survey),
                   figure(plot_share(survey.entries), "share") + note)


#: vkbench's count, the one every share and CPU-node chart here uses.
OWN_SHARE_DEFINITION = ("<b>vkbench's share</b>: <code>call_function</code> nodes of the lowered edge graph "
                        "inside the Vulkan delegates over all of them; <code>getitem</code> and the delegate "
                        "calls are plumbing, not computation, and are not counted.")
#: ExecuTorch's count, shown beside it where the record has it (what ExecuTorch's backend tester reports).
EXECUTORCH_SHARE = ("<b>ExecuTorch's share</b>: <code>get_delegation_info</code>'s "
                    "<code>num_delegated_nodes</code> over <code>num_delegated_nodes</code> + "
                    "<code>num_non_delegated_nodes</code>; it also counts <code>getitem</code> nodes "
                    "(inside a delegate as delegated; outside, one per output a delegate call returns, as "
                    "not delegated), but not the delegate calls themselves.")


def share_definitions(entries: list[EntryShare]) -> str:
    """The two counts' one-line definitions; ExecuTorch's only when some entry's record has its numbers."""
    lines = [OWN_SHARE_DEFINITION]
    if any(entry.et_share is not None for entry in entries):
        lines.append(EXECUTORCH_SHARE)
    return "".join(f'<p class="note">{line}</p>' for line in lines)


def blockers_section(survey: Survey | None) -> Section:
    if survey is None:
        return Section("blockers", "Top blockers", "No policy survey committed yet.", "")
    lowered = [e for e in survey.entries if e.status == "lowered"]
    blocked = [e for e in survey.entries if e.status != "lowered"]
    body = figure(plot_blockers(survey.blockers, lowered), "blockers") if survey.blockers else ""
    if blocked:
        body += blocked_table(blocked)
    body += ('<p class="note">Ops ranked as <code>vkbench policies</code> ranks them: entries unblocked, '
             "entries touched, nodes. “Unblocks”: the entries whose only CPU op this is, so supporting it "
             "delegates them whole. The table lists the entries that never reach the partitioner; the "
             '<a href="bugs.html">bug list</a> gives each failure its owner, probe and reproducer.</p>')
    return Section("blockers", "Top blockers", blockers_headline(survey.blockers, lowered), body)


def blocked_table(blocked: list[EntryShare]) -> str:
    """Blocked entries grouped by (stage, error type): a few rows, one message each (text, not a plot)."""
    groups: dict[tuple[str, str], list[EntryShare]] = {}
    for entry in blocked:
        groups.setdefault((entry.stage, entry.error_type), []).append(entry)
    order = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    rows = "".join(
        f"<tr><td>{html.escape(stage)}</td><td>{html.escape(error_type)}</td>"
        f"<td>{', '.join(f'<code>{html.escape(e.entry)}</code>' for e in group)}</td>"
        f"<td>{html.escape(_short(group[0].error, 110))}</td></tr>"
        for (stage, error_type), group in order)
    return ('<table class="blocked"><thead><tr><th>blocked at</th><th>error</th><th>entries</th>'
            f"<th>message (first entry)</th></tr></thead><tbody>{rows}</tbody></table>")


def _short(text: str, limit: int = 140) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def scaling_section(scaling: list[Scaling], pattern_bug: BugRow | None = None) -> Section:
    if not scaling:
        return Section("scaling", "Partition scaling", "No partition scaling recorded yet.",
                       '<p class="empty">Record a release (<code>vkbench record</code>) to time '
                       "<code>bench_partition.PartitionScaling</code>.</p>")
    scale = scaling[0]
    exponents = ", ".join(f'<b class="exponent" data-machine="{html.escape(s.machine)}">'
                          f"k = {s.exponent:.2f}</b> on {html.escape(s.machine)}"
                          for s in scaling if s.exponent is not None)
    missing = [n for n in scale.sizes if n not in scale.seconds]
    gap = (f" {', '.join(map(str, missing))} blocks not recorded yet (the standard tier times them)."
           if missing else "")
    note = (f'<p class="note">Fitted exponent (least squares of log seconds on log n, '
            f"<code>vkbench.workloads.scaling.loglog_exponent</code>): {exponents}. "
            f"<code>{PARTITION_TIME}</code> (asv CPU time) and <code>PartitionScalingPhases</code> "
            f"from {html.escape(scale.label)}.{gap}</p>")
    gap_at = phase_gap(scale)
    caption = ""
    if gap_at:
        n, line, bars = gap_at
        caption = (f"Line: CPU seconds, median of samples · bars: wall seconds of one instrumented run "
                   f"<small>(at {n} blocks {bars:.2f} s against {line:.2f} s; why: below)</small>")
        note += phase_gap_note(scale, *gap_at)
    return Section("scaling", "Partition scaling", scaling_headline(scale),
                   figure(plot_scaling(scaling), "scaling", caption) + pattern_share_note(scale, pattern_bug)
                   + note)


def pattern_share_note(scale: Scaling, bug: BugRow | None) -> str:
    """One line: ``fusable_patterns``' share of the phase bars per size, and the bug row that spends it."""
    shares = [(n, share, scale.phases[FUSABLE_PHASE][n]) for n in sorted(scale.phases.get(FUSABLE_PHASE, {}))
              if (share := scale.phase_share(FUSABLE_PHASE, n)) is not None]
    if not shares:
        return ""
    parts = ", ".join(f'<span class="share" data-blocks="{n}" data-share="{share:.4f}">{n} blocks '
                      f"<b>{100 * share:.0f} %</b></span>" for n, share, _ in shares)
    seconds = [s for *_, s in shares]
    why = (f', mostly ExecuTorch re-exporting its RoPE pattern graphs on each partition: '
           f'<a href="bugs.html#{html.escape(bug.id)}">{html.escape(bug.id)}</a> '
           f"({html.escape(bug.fixed_in or bug.kind)})") if bug else ""
    return (f'<p class="note pattern-share"><code>{FUSABLE_PHASE}</code> share of the phase bars: {parts} '
            f"({min(seconds):.2f}–{max(seconds):.2f} s at any size){why}.</p>")


def phase_gap(scale: Scaling) -> tuple[int, float, float] | None:
    """The largest size with both a ``time_partition`` value and phases: (n, line seconds, bar seconds)."""
    both = [n for n in sorted(scale.seconds) if scale.phase_total(n) is not None]
    return (both[-1], scale.seconds[both[-1]], scale.phase_total(both[-1]) or 0.0) if both else None


def phase_gap_note(scale: Scaling, n: int, line: float, bars: float) -> str:
    """Why the phase bars and the line disagree, with the two numbers (from the data) and the other sizes'."""
    samples = scale.samples.get(n)
    median = (f"the median of {plural(samples, 'sample', 'samples')} at {n} blocks" if samples
              else "the median of its samples")
    others = "; ".join(f"{m} blocks {scale.phase_total(m):.2f} s against {scale.seconds[m]:.2f} s"
                       for m in sorted(scale.seconds) if m != n and scale.phase_total(m) is not None)
    return (f'<p class="note phase-gap" data-blocks="{n}" data-line="{line:.2f}" data-bars="{bars:.2f}">'
            f"Why the bars and the line differ: at {n} blocks the phase bars add up to <b>{bars:.2f} s</b> "
            f"and the line reads <b>{line:.2f} s</b> ({_signed_pct(bars - line, line)}). They are two "
            f"measurements. The line is <code>{PARTITION_TIME}</code>: process CPU seconds "
            f"(<code>time.process_time</code>), {median}. The bars are <code>PartitionScalingPhases"
            ".track_phase_seconds</code>: the one instrumented partition per size that the shared record "
            "makes (<code>vkbench.workloads.scaling.measure</code>), each phase timed by the wall clock "
            "(<code>time.perf_counter</code>, exclusive) while a thread samples peak RSS. Both call the same "
            "instrumented <code>timed_partition</code>, so the gap is not the phase wrappers (they cost the "
            "same in both): it is wall against CPU time (the wall clock also counts time the process spent "
            "off the CPU: other jobs on a shared machine, the RSS thread) and one run against a median."
            f"{f' Other sizes, bars against line: {others}.' if others else ''}</p>")


def _signed_pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:+.0f}%" if whole else "n/a"


def upstream_section(upstream: Upstream, has_site: bool) -> Section:
    if not upstream.commits or not upstream.series:
        return Section("upstream", "Coverage across upstream commits",
                       "No upstream commits recorded yet (vkbench upstream records them).", "")
    key = (f'<p class="note"><span class="key" style="background:#e07b39"></span>CPU ops (lower is better)'
           f'<span class="key" style="border-top:2px dashed {DELEGATED};height:0"></span>Vulkan programs '
           "(probes). x: commits in commit-date order, every commit a tick; a release tag (bold) under a "
           "commit names it (the tag stored beside the commit's results, and the ledger's releases).</p>")
    charts = []
    for i, series in enumerate(upstream.series):
        svg = plot_commit_series(series, upstream.commits, upstream.releases, f"up{i}")
        caption = f"{html.escape(series.name)} <small>{series.kind}</small>" + failure_caption(
            series, upstream.commits)
        charts.append(figure(svg, f"upstream-{series.kind}-{series.name}", caption))
    link = (' Per-benchmark history: <a href="upstream/index.html">upstream asv site</a>.'
            if has_site else "") + (' Every step, its commit, reasons and a command to reproduce it: '
                                    '<a href="changes.html">changes</a>.')
    fed = sorted({name for series in upstream.series for name in series.benchmarks})
    note = (f'<p class="note">asv results of {", ".join(f"<code>{html.escape(n)}</code>" for n in fed)} '
            f"under <code>results/upstream/</code>; a red cross: recorded, did not lower (reason in the "
            f"caption, from the file's sidecar); grey, hollow: recorded by a vkbench suite older than its "
            f"digest (drawn, never compared).{link}</p>")
    return Section("upstream", "Coverage across upstream commits", upstream_headline(upstream),
                   key + f'<div class="grid">{"".join(charts)}</div>' + note)


def failure_caption(series: CommitSeries, commits: list[tuple[str, int]]) -> str:
    """Where the series stops and why: each run of failures (broken only by a commit where the
    workload has a value, or by a new reason; commits that did not record it don't break a run)."""
    marks: dict[int, str] = {}
    for by_commit in series.failures.values():
        marks.update(by_commit)
    if not marks:
        return ""
    valued = {i for values in series.cpu_ops.values() for i, v in enumerate(values) if v is not None}
    runs: list[list[int]] = []
    for i in sorted(marks):
        if runs and marks[runs[-1][0]] == marks[i] and not any(runs[-1][-1] < j < i for j in valued):
            runs[-1].append(i)
        else:
            runs.append([i])
    parts = [f"from <code>{commits[run[0]][0][:8]}</code> "
             f"({plural(len(run), 'recorded commit', 'recorded commits')}): "
             f"{html.escape(_short(marks[run[0]], 120))}" for run in runs[:2]]
    more = f"; {len(runs) - 2} more" if len(runs) > 2 else ""
    return f'<br><small class="failed" title="{html.escape(marks[runs[0][0]])}">✕ did not lower ' + "; ".join(
        parts) + more + "</small>"


def steps_section(limits: list[StepLimit]) -> Section:
    if not limits:
        return Section("step-limits", "Step limits per device", "No runtime results recorded yet.",
                       '<p class="empty">See <a href="runtime.html">the runtime page</a>.</p>')
    note = ('<p class="note"><code>Many(n)</code> is <code>x*1.0001+0.001</code> n times in one Vulkan '
            "delegate; the limit is the bisection cap minus asv's <code>track_steps_short_of_cap</code>. "
            'Latencies per n: <a href="runtime.html">runtime page</a>.</p>')
    return Section("step-limits", "Step limits per device", steps_headline(limits),
                   figure(plot_step_limits(limits), "step-limits") + note)


def ladder_section(ladder: tuple[list[str], list[list[str]]]) -> Section:
    headers, table = ladder
    if not table:
        return Section("ladder", "How far policies get on Vulkan", "No policy ladder recorded yet.",
                       '<p class="empty">Record <code>bench_policy_runtime.PolicyLadder</code> on a Vulkan '
                       "machine.</p>")
    def cell(text: str) -> str:
        rung = f' class="rung-{text.replace(" ", "-")}"' if text in RUNG_COLOURS else ""
        return f"<td{rung}>{html.escape(text)}</td>"

    cells = "".join(f'<tr class="{"probe" if is_probe(row[0]) else "policy"}">' + "".join(map(cell, row))
                    + "</tr>" for row in table)
    body = (figure(plot_ladder(ladder_counts(headers, table)), "ladder")
            + '<div class="table-scroll"><table class="ladder"><thead><tr>'
            + "".join(f"<th>{html.escape(h)}</th>" for h in headers)
            + f"</tr></thead><tbody>{cells}</tbody></table></div>"
            + '<p class="note">Lowered → the <code>.pte</code> loads → it runs → its outputs match eager '
              "(SNR ≥ 40 dB): asv's <code>PolicyLadder.track_rungs_short</code>; probes (rows "
              "<code>probe/…</code>, <code>ProbeLadder</code>) are counted apart and listed last; errors per "
              'stage on the <a href="runtime.html">runtime page</a>; each load or run failure, with its '
              'probe and reproducer, in the <a href="bugs.html">bug list</a>.</p>')
    return Section("ladder", "How far policies get on Vulkan", ladder_headline(headers, table), body)


def tiles(survey: Survey | None, scaling: list[Scaling], upstream: Upstream,
          limits: list[StepLimit]) -> str:
    """The numbers a visitor should leave with, one per section."""
    items = []
    if survey:
        lowered = [e for e in survey.entries if e.status == "lowered"]
        total = sum(e.total for e in lowered)
        items.append((pct(sum(e.delegated for e in lowered), total), f"of {total:,} policy nodes on Vulkan"))
        if lowered and all(e.et_share is not None for e in lowered):  # only where every row has it
            et_delegated = sum(e.et_delegated or 0 for e in lowered)
            et_total = et_delegated + sum(e.et_non_delegated or 0 for e in lowered)
            items.append((pct(et_delegated, et_total),
                          f"of {et_total:,} by ExecuTorch's get_delegation_info (getitem counted)"))
        items.append((f"{len(survey.entries) - len(lowered)} / {len(survey.entries)}",
                      "policy entries blocked before delegation"))
    if scaling and scaling[0].exponent is not None:
        items.append((f"n^{scaling[0].exponent:.2f}", "partition time growth with graph size"))
    items.append((str(len(upstream.commits)), "upstream commits recorded"))
    traced = [s.limit for s in limits if s.tracer == "on"]
    if traced:
        items.append((f"{min(traced):,}", "Many(n) steps with the event tracer on"))
    return '<div class="tiles">' + "".join(
        f'<div class="tile"><b>{html.escape(v)}</b><span>{html.escape(t)}</span></div>' for v, t in items
    ) + "</div>"


def stack_line(stack: TorchStack) -> str:
    """Which torch the numbers come from, and which the recorded commits pin (one line, the header's)."""
    used = ", ".join(f"{html.escape(t)} {n}" for t, n in stack.used.items()) or "none recorded"
    pinned = ", ".join(f"{html.escape(t)} ({n})" for t, n in stack.pinned.items())
    line = f"Result files by the torch they were lowered with: {used}"
    if pinned:
        line += (f"; the recorded ExecuTorch commits pin torch {pinned} (<code>torch_pin.py</code>). Counts "
                 "under torch 2.13.0 equal those under 2.11.0 (<code>vkbench suite torch-compare</code>, "
                 "docs/history.md)")
    return f'<p class="stack">{line}.</p>'


def render(sections: list[Section], links: list[Link], tiles_html: str, stack_html: str = "") -> str:
    nav = "".join(f'<a href="{html.escape(link.href)}">{html.escape(link.title)}</a>'
                  f"<span>{html.escape(link.about)}</span>" for link in links)
    body = "".join(
        f'<section id="{s.id}"><p class="kicker">{html.escape(s.kicker)}</p>'
        f'<h2 class="headline">{html.escape(s.headline)}</h2>{s.body}</section>' for s in sections)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>vkbench: the ExecuTorch Vulkan backend on LeRobot policies</title><style>{CSS}</style>"
            "</head><body><header><h1>vkbench: the ExecuTorch Vulkan backend on LeRobot policies</h1>"
            "<p>How much of each policy runs on Vulkan, what keeps the rest on the CPU, how the "
            "partitioner scales, how coverage moves upstream, and how far the runtime goes.</p>"
            f"{stack_html}<nav>{nav}</nav></header><main>{tiles_html}{body}</main>"
            "<footer>Generated by <code>vkbench.site.dashboard</code> from the committed results; "
            "every plot is inline SVG (matplotlib), nothing is loaded from the network; the asv sites load "
            "vendored scripts (<code>vendor/manifest.json</code>).</footer>"
            "</body></html>\n")


def page_html(data: SiteData) -> str:
    """``index.html``, the dashboard, from the publish's data (it holds the navigation to the others)."""
    survey = load_survey(data)
    scaling = load_scaling(data)
    upstream = load_upstream(data)
    limits = load_step_limits(data)
    sections = [share_section(survey), blockers_section(survey),
                scaling_section(scaling, load_pattern_bug(data)),
                upstream_section(upstream, data.has_site("upstream")), steps_section(limits),
                ladder_section(load_ladder(data))]
    return render(sections, data.links, tiles(survey, scaling, upstream, limits),
                  stack_line(load_torch_stack(data)))


PAGE = Page("index.html", "Dashboard", "the state of the Vulkan backend at a glance", page_html)
