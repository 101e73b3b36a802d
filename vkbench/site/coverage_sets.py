"""Coverage sets: probe/policy x CPU op x partitioner reason, per ExecuTorch commit (what
``coverage.html`` shows, :mod:`vkbench.site.coverage_page`).

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

from vkbench.core.versions import executorch_identity, public_version
from vkbench.paths import RESULTS_ROOT

#: Under a results root: the coverage sets, one per ExecuTorch commit.
FOLDER = "coverage"
#: The checkout's sets: committed, so a clean clone publishes the coverage of every recorded release.
CACHE = RESULTS_ROOT / FOLDER


def identity() -> dict[str, Any]:
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


class SurveyMismatch(ValueError):
    """A saved survey of another ExecuTorch than the importable one; ``str()`` is one line naming both."""


def survey_policy_rows(path: Path, ident: dict[str, Any]) -> list[dict[str, Any]]:
    """The policy rows of a saved survey (:func:`vkbench.results.surveys.read_survey`), so a set's probes
    can be computed again without lowering every policy entry a second time (hours here): the survey must
    be of the importable ExecuTorch (``executorch-1.5.1-…`` for ``1.5.1+cpu``)."""
    from vkbench.results.surveys import read_survey

    survey = read_survey(path)
    version = str(ident.get("version") or "")
    if survey.version == "?" or public_version(version) != survey.version:
        raise SurveyMismatch(f"{path}: a survey of executorch {survey.version}, not of the importable "
                             f"{version or 'unknown'}")
    return policy_rows(survey.rows)


def collect(cache: Path = CACHE, *, refresh: bool = False, policies: bool = False,
            probes: list[str] | None = None, survey: Path | None = None) -> dict[str, Any]:
    """Coverage of the ExecuTorch importable here, from cache unless ``refresh``; ``survey``: the policy
    rows come from that saved survey (:func:`survey_policy_rows`), named in the set as ``policies_from``.
    Raises :class:`SurveyMismatch` (or ``ValueError`` for an unreadable survey) before lowering anything."""
    ident = identity()
    path = cache / f"{cache_key(ident)}.json"
    if path.exists() and not refresh and not policies and survey is None:
        return json.loads(path.read_text())
    saved = survey_policy_rows(survey, ident) if survey is not None else []
    start = time.monotonic()
    rows = probe_rows(probes, progress=lambda line: print(line, file=sys.stderr, flush=True)) + saved
    if policies:
        try:
            from vkbench.workloads.policies import fast_entries
            from vkbench.workloads.policies import survey as survey_entries

            rows += policy_rows(survey_entries(fast_entries()))
        except Exception as error:  # noqa: BLE001 - policies are optional
            print(f"coverage: policies skipped ({type(error).__name__}: {error})", file=sys.stderr)
    data = {
        "executorch": ident, "computed": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seconds": round(time.monotonic() - start, 1), "rows": rows,
        **({"policies_from": survey.as_posix()} if survey is not None else {}),
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
