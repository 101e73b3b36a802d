"""The coverage page, ``coverage.html``: probe/policy x CPU op x partitioner reason, per commit.

Rows come from :func:`vkbench.core.lowering.lower` over the probes (the same call
the CLI and the suite make), and from ``vkbench.workloads.policies`` survey rows when
that package and a stored survey exist. Each set is filed under the
ExecuTorch it was computed with (version + upstream ``git_version``, which for
an ``aot`` build is the measured commit) in ``results/coverage/<key>.json`` (committed), so a
publish reuses it and coverage computed inside asv environments (``python -m
vkbench.site coverage`` run there) shows up next to the installed release's. A publish reads the
sets stored under its results root (:func:`stored`, into :class:`~vkbench.site.data.SiteData`).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from vkbench.paths import RESULTS_ROOT
from vkbench.site.data import SiteData

#: Under a results root: the coverage sets, one per ExecuTorch commit.
FOLDER = "coverage"
#: The checkout's sets: committed, so a clean clone publishes the coverage of every recorded release.
CACHE = RESULTS_ROOT / FOLDER


def identity() -> dict[str, Any]:
    from vkbench.core.versions import executorch_identity

    ident = executorch_identity()
    return {"version": ident.get("version"), "git_version": ident.get("git_version")}


def cache_key(ident: dict[str, Any]) -> str:
    raw = f"{ident.get('version')}-{(ident.get('git_version') or 'unknown')[:12]}"
    return re.sub(r"[^A-Za-z0-9._+-]", "_", raw)


#: The record's counts each row carries, so the page can show both shares; ExecuTorch's two are absent
#: from records made before vkbench took them, and rows then carry only vkbench's.
SHARE_FIELDS = ("nodes_total", "nodes_cpu", "et_delegated_nodes", "et_non_delegated_nodes")


def _rows_from_coverage(kind: str, name: str, coverage: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    reasons = coverage.get("reasons_by_op") or {}
    for op, count in sorted((coverage.get("cpu_ops") or {}).items()):
        for reason, nodes in sorted((reasons.get(op) or {"(no reason recorded)": count}).items()):
            rows.append({"kind": kind, "name": name, "op": op, "reason": reason, "nodes": nodes})
    if not rows:
        rows.append({"kind": kind, "name": name, "op": "", "reason": "all delegated", "nodes": 0})
    counts = {key: coverage[key] for key in SHARE_FIELDS if coverage.get(key) is not None}
    return [{**row, **counts} for row in rows]


def probe_rows(names: list[str] | None = None, progress: Any = None) -> list[dict[str, Any]]:
    from vkbench.workloads.probes import PROBES, probe_coverage

    rows: list[dict[str, Any]] = []
    for name in names or list(PROBES):
        data = probe_coverage(name)
        if "error" in data:
            rows.append({"kind": "probe", "name": name, "op": "", "reason": f"FAILED: {data['error']}",
                         "nodes": 0})
            continue
        for row in _rows_from_coverage("probe", name, data):
            row.update(vulkan_programs=data["vulkan_programs"])
            rows.append(row)
        if progress:
            progress(f"coverage: lowered probe {name}")
    return rows


def policy_rows(survey_rows: list[Any] | None = None) -> list[dict[str, Any]]:
    """Rows from ``vkbench.workloads.policies`` survey rows (objects or dicts); [] if unavailable."""
    if survey_rows is None:
        return []
    rows: list[dict[str, Any]] = []
    for row in survey_rows:
        data = row.to_json() if hasattr(row, "to_json") else dict(row)
        name = data.get("entry") or data.get("policy") or "?"
        if data.get("status") == "lowered" and data.get("coverage"):
            rows.extend(_rows_from_coverage("policy", name, data["coverage"]))
        else:
            stage = data.get("stage") or "?"
            reason = f"BLOCKED at {stage}: {data.get('error_type', '')} {data.get('error', '')}"
            rows.append({"kind": "policy", "name": name, "op": "", "reason": reason.strip(), "nodes": 0})
    return rows


def collect(cache: Path = CACHE, *, refresh: bool = False, policies: bool = False,
            probes: list[str] | None = None) -> dict[str, Any]:
    """Coverage of the ExecuTorch importable here, from cache unless ``refresh``."""
    ident = identity()
    path = cache / f"{cache_key(ident)}.json"
    if path.exists() and not refresh and not policies:
        return json.loads(path.read_text())
    start = time.monotonic()
    rows = probe_rows(probes, progress=lambda line: print(line, file=sys.stderr, flush=True))
    if policies:
        try:
            from vkbench.workloads.policies import fast_entries, survey

            rows += policy_rows(survey(fast_entries()))
        except Exception as error:  # noqa: BLE001 - policies are optional
            print(f"coverage: policies skipped ({type(error).__name__}: {error})", file=sys.stderr)
    data = {
        "executorch": ident, "computed": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seconds": round(time.monotonic() - start, 1), "rows": rows,
    }
    cache.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    return data


def stored(cache: Path = CACHE) -> list[dict[str, Any]]:
    """Every coverage set in the cache, oldest computation first."""
    sets = []
    for path in sorted(cache.glob("*.json")):
        try:
            sets.append(json.loads(path.read_text()))
        except (OSError, json.JSONDecodeError):
            continue
    return sorted(sets, key=lambda s: s.get("computed", ""))


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>vkbench: Vulkan coverage</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:13px;width:100%}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
td:nth-child(5){overflow-wrap:anywhere}td:nth-child(2),td:nth-child(6),td:nth-child(7),td:nth-child(8){white-space:nowrap}
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
    return parts.join(" \u00b7 ");
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
    return PAGE.replace("__DATA__", payload)


def write(html_root: Path, data: SiteData) -> Path:
    """Write ``coverage.html`` with every stored coverage set embedded."""
    path = Path(html_root) / "coverage.html"
    path.write_text(render_page(data.coverage_sets))
    return path
