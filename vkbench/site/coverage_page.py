"""The coverage page, ``coverage.html``: probe/policy x CPU op x partitioner reason, per commit.

Every stored coverage set (:mod:`vkbench.site.coverage_sets`) embedded as JSON, filtered in the browser.
"""

from __future__ import annotations

import json
from typing import Any

from vkbench.site.data import SiteData
from vkbench.site.page import Page
from vkbench.site.text import plural

TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>vkbench: Vulkan coverage</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:13px;width:100%}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
td:nth-child(5){min-width:14em;overflow-wrap:anywhere}td:nth-child(2),td:nth-child(6),td:nth-child(7){white-space:nowrap}
td:nth-child(8){white-space:pre}
th{background:#f0f0f0;cursor:pointer}code{font-size:12px}td:first-child{white-space:nowrap}
tr.delegated td{color:#1e7a4c;background:#eef8f1}
tr.blocked td{color:#9b2226;background:#fbeaea}tr.blocked td:first-child{box-shadow:inset 4px 0 #c0392b}
tr.partial td:first-child{box-shadow:inset 4px 0 #e3b23c}
.swatch{display:inline-block;padding:0 .5em;margin-right:.6em;border-radius:3px}
select,input{margin:0 1em 1em 0}
</style></head><body>
<p><a href="index.html">&larr; vkbench sites</a></p>
<h1>Vulkan coverage: what stays on the CPU, and why</h1>
<p>One row per (commit, probe or policy, CPU op, partitioner reason); <em>nodes</em> counts graph nodes.
Computed with <code>vkbench.core.lowering.lower</code>; data is embedded below (no network needed).</p>
<p>Status: <span class="swatch" style="color:#1e7a4c;background:#eef8f1">delegated</span> all of it on
Vulkan; <span class="swatch" style="box-shadow:inset 4px 0 #e3b23c">partial</span> some nodes stay on the
CPU (a row per CPU op); <span class="swatch" style="color:#9b2226;background:#fbeaea">blocked</span> never
reached the partitioner (export, to_edge, ... failed), so nothing was delegated.</p>
<p><em>CPU share</em>, two counts of one lowered graph. <b>vkbench</b>: <code>call_function</code> nodes of
the edge graph outside the delegates over all of them, <code>getitem</code> and the delegate calls left out
(plumbing, not computation). <b>ExecuTorch</b> (where the record has it): <code>get_delegation_info</code>'s
<code>num_non_delegated_nodes</code> over it + <code>num_delegated_nodes</code>, which counts
<code>getitem</code> nodes inside and outside the delegates too (not the delegate calls): what ExecuTorch's
backend tester reports.</p>
<label>commit <select id="commit"></select></label>
<label>filter <input id="filter" placeholder="op, reason or name"></label>
<table id="coverage"><thead><tr><th>commit</th><th>kind</th><th>name</th><th>CPU op</th>
<th>partitioner reason</th><th>nodes</th><th>status</th><th>CPU share</th></tr></thead><tbody></tbody></table>
<script id="coverage-data" type="application/json">__DATA__</script>
<script>
(function () {
  var sets = JSON.parse(document.getElementById("coverage-data").textContent);
  var select = document.getElementById("commit"), filter = document.getElementById("filter");
  var body = document.querySelector("#coverage tbody");
  var STATUS = {delegated: "delegated", partial: "partial", blocked: "blocked"};
  function label(s) {
    var e = s.executorch || {};
    return (e.version || "?") + (e.git_version ? " @ " + e.git_version.slice(0, 10) : "");
  }
  var all = document.createElement("option");
  all.value = ""; all.textContent = "all"; select.appendChild(all);
  sets.forEach(function (s, i) {
    var o = document.createElement("option");
    o.value = String(i); o.textContent = label(s); select.appendChild(o);
  });
  function cell(tr, text) {
    var td = document.createElement("td"); td.textContent = text; tr.appendChild(td);
  }
  function pct(part, whole) { return (whole ? 100 * part / whole : 0).toFixed(1) + "% of " + whole; }
  function share(r) {
    var parts = [];
    if (r.nodes_total != null && r.nodes_cpu != null) {
      parts.push("vkbench " + pct(r.nodes_cpu, r.nodes_total));
    }
    if (r.et_delegated_nodes != null && r.et_non_delegated_nodes != null) {
      var et = r.et_delegated_nodes + r.et_non_delegated_nodes;
      parts.push("ExecuTorch " + pct(r.et_non_delegated_nodes, et));
    }
    return parts.join("\\n");  // one line per definition (the cell keeps the break)
  }
  function render() {
    body.innerHTML = "";
    var needle = filter.value.toLowerCase(), count = 0;
    sets.forEach(function (s, i) {
      if (select.value !== "" && select.value !== String(i)) return;
      s.rows.forEach(function (r) {
        var text = [r.kind, r.name, r.op, r.reason].join(" ").toLowerCase();
        if (needle && text.indexOf(needle) < 0) return;
        var tr = document.createElement("tr");
        tr.className = r.status;
        var cells = [label(s), r.kind, r.name, r.op || "-", r.reason, String(r.nodes), STATUS[r.status],
                     share(r)];
        cells.forEach(function (t) { cell(tr, t); });
        body.appendChild(tr); count++;
      });
    });
    document.body.setAttribute("data-rows", String(count));
  }
  select.onchange = render; filter.oninput = render; render();
})();
</script></body></html>
"""


def row_status(row: dict[str, Any]) -> str:
    """``delegated`` (nothing left on the CPU), ``partial`` (a CPU op row) or ``blocked`` (the entry or
    probe never reached the partitioner: ``BLOCKED at <stage>``/``FAILED`` rows, which have no op either)."""
    if row.get("op"):
        return "partial"
    return "delegated" if row.get("reason") == "all delegated" else "blocked"


def render_page(sets: list[dict[str, Any]]) -> str:
    """The page, every set embedded as JSON with each row's :func:`row_status` (the row's class)."""
    sets = [{**s, "rows": [{**row, "status": row_status(row)} for row in s.get("rows", [])]} for s in sets]
    payload = json.dumps(sets).replace("</", "<\\/")
    return TEMPLATE.replace("__DATA__", payload)


def page_html(data: SiteData) -> str:
    """``coverage.html`` with every stored coverage set embedded."""
    return render_page(data.coverage_sets)


PAGE = Page("coverage.html", "Coverage", "probe/policy × CPU op × partitioner reason, per commit", page_html,
            lambda data: plural(len(data.coverage_sets), "commit"))
