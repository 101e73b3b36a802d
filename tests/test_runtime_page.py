"""``runtime.html`` and ``vkbench runtime``: tables read from asv result files.

The result files here are written in asv 0.6's on-disk layout (``result_columns``
plus one row per benchmark) with values of the kind the runtime suite records;
the committed results, when present, must parse the same way.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from vkbench.site import runtime_page, runtime_rows
from vkbench.site.load import load_site_data

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = ["result", "params", "version", "started_at", "duration"]


def _write_machine(folder: Path, name: str, results: dict[str, list]) -> None:
    machine = folder / name
    machine.mkdir(parents=True)
    (machine / "machine.json").write_text(json.dumps({"machine": name, "cpu": "test cpu", "version": 1}))
    (machine / "a9ed1dc2-existing-py3.12.json").write_text(json.dumps({
        "commit_hash": "a9ed1dc2fe71bb08286b0223250b5376f446b580", "env_name": "existing-py3.12",
        "result_columns": COLUMNS, "results": results, "version": 2,
    }))


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """``results/releases``: one machine with runtime results (policy and probe ladder rows), one without."""
    folder = tmp_path / "releases"
    sizes, runners = ["500", "1000", "1500"], ["'python'", "'native'"]
    native = [[None, 0.005, None, 0.011, None, None], [sizes, runners], "h", 0, 1]  # (n, runner) product
    _write_machine(folder, "gpu-tracer-on", {
        "bench_runtime.StepLimit.track_steps_short_of_cap": [[None, 2977], [runners], "h", 0, 1],
        "bench_runtime.ManyRuntime.track_execute_seconds": native,
        "bench_runtime.ManyRuntime.track_us_per_dispatch": [
            [None, 5.0, None, 5.5, None, None], [sizes, runners], "h", 0, 1],
        "bench_runtime.ManyRuntime.track_max_abs_diff": [
            [None, 0.0, None, 0.0, None, None], [sizes, runners], "h", 0, 1],
        "bench_policy_runtime.PolicyLadder.track_rungs_short": [
            [None, 0, None, 3], [["'tdmpc/pi'", "'act/model'"], runners], "h", 0, 1],
        "bench_policy_runtime.PolicyRuntime.track_forward_seconds": [
            [None, 0.003, None, 0.004, None, None, None, 0.2],
            [["'tdmpc/pi'", "'tdmpc/q'"], ["'vulkan'", "'xnnpack'"], runners], "h", 0, 1],
        "bench_runtime.ProbeLadder.track_rungs_short": [  # probes: matches, not lowered, lowered
            [None, 0, None, 4, None, 3], [["'probe/mish'", "'probe/elu'", "'probe/var'"], runners],
            "h", 0, 1],
    })
    _write_machine(folder, "cpu-only", {  # eager alone is not a runtime result
        "bench_runtime.ManyEager.time_eager": [[0.003, 0.006, 0.01], [sizes], "h", 0, 1],
        "bench_runtime.ManyRuntime.track_execute_seconds": [None, [sizes, runners], "h", 0, 1],
    })
    return folder


def runtime_files(folder: Path) -> list[Path]:
    """Result files holding a runtime benchmark with a value (eager alone is none), read as plain JSON:
    an independent count of what :func:`runtime_rows.machine_rows` must return."""
    held = []
    for path in sorted(folder.glob("*/*.json")):
        if path.name == "machine.json":
            continue
        data = json.loads(path.read_text())
        for name, row in data.get("results", {}).items():
            if not name.startswith(("bench_runtime.", "bench_policy_runtime.")) or name.startswith(
                    "bench_runtime.ManyEager."):
                continue
            values = row[0] if isinstance(row[0], list) else [row[0]]
            if any(isinstance(v, int | float) and not math.isnan(v) for v in values):
                held.append(path)
                break
    return held


def test_rows_limits_and_per_n_values(results):
    rows = runtime_rows.machine_rows(results)
    assert [row["machine"] for row in rows] == ["gpu-tracer-on"]
    assert len(rows) == len(runtime_files(results)) == 1
    limit = rows[0]["limits"]["C++ runner"]
    assert limit["limit"] == limit["cap"] - 2977
    assert rows[0]["many"][1000]["µs per dispatch (C++ runner)"] == 5.5
    labels, limit_rows, many_rows = runtime_page.table_rows(rows)
    assert limit_rows == [["gpu-tracer-on", "a9ed1dc2", "C++ runner", str(limit["limit"]), str(limit["cap"])]]
    assert labels == ["execute (C++ runner)", "µs per dispatch (C++ runner)", "max abs diff (C++ runner)"]
    assert ["gpu-tracer-on", "1500", "—", "—", "—"] in many_rows
    assert "11.00 ms" in many_rows[1]
    policies = rows[0]["policies"]  # asv flattens entry x backend in product order
    assert policies[("C++ runner", "tdmpc/pi", "xnnpack")]["forward"] == 0.004
    assert policies[("C++ runner", "tdmpc/q", "xnnpack")]["forward"] == 0.2
    assert policies[("C++ runner", "tdmpc/q", "vulkan")]["forward"] is None
    expected_row = ["gpu-tracer-on", "C++ runner", "tdmpc/q", "xnnpack", "200.00 ms", "—"]
    assert expected_row in runtime_page.policy_rows(rows)
    headers, ladder = runtime_page.ladder_table(rows)  # policy entries first, probes after them
    assert (headers, ladder) == (["entry", "gpu-tracer-on (C++ runner)"], [
        ["act/model", "lowered"], ["tdmpc/pi", "matches"],
        ["probe/elu", "not lowered"], ["probe/mish", "matches"], ["probe/var", "lowered"]])
    page = runtime_page.render(rows, [])
    assert "How far each policy entry and probe gets on Vulkan" in page
    assert "gpu-tracer-on" in page and "5.50" in page and "cpu-only" not in page


def test_ladder_counts_probes_apart_from_policy_entries(results):
    """A ``probe/<name>`` row is a probe: the headline counts 2 policy entries and 3 probes, not 5 entries."""
    headers, ladder = runtime_page.ladder_table(runtime_rows.machine_rows(results))
    counts = runtime_page.ladder_counts(headers, ladder)["gpu-tracer-on (C++ runner)"]
    assert counts["policy entries"] == {"matches": 1, "lowered": 1}
    assert counts["probes"] == {"matches": 1, "lowered": 1, "not lowered": 1}
    headline = runtime_page.ladder_headline(headers, ladder)
    assert headline == ("1 of 2 policy entries match eager PyTorch on Vulkan (gpu-tracer-on (C++ runner)); "
                        "1 of 3 probes match")
    policies_only = [row for row in ladder if not row[0].startswith("probe/")]  # the format without probes
    assert runtime_page.ladder_headline(headers, policies_only) == (
        "1 of 2 policy entries match eager PyTorch on Vulkan (gpu-tracer-on (C++ runner))")
    from vkbench.site.dashboard.dashboard_page import ladder_section

    section = ladder_section((headers, ladder))
    assert section.headline == headline
    assert '<div class="table-scroll"><table class="ladder">' in section.body  # scrolls inside its card
    assert section.body.count('<tr class="probe">') == 3 and section.body.count('<tr class="policy">') == 2


def test_written_page_shows_every_row(results, tmp_path):
    """The site's data holds, and ``write`` renders, one block per result file with runtime values: never
    zero here (the results root of ``results``, without policy runs outside asv)."""
    html_root = tmp_path / "html"
    html_root.mkdir()
    data = load_site_data(html_root, results.parent)
    shown = len(data.runtime_rows)
    assert shown == len(runtime_files(results)) == 1 and data.policy_runs == []
    page = runtime_page.PAGE.write(html_root, data).read_text()
    assert page.count("<h2>gpu-tracer-on <small>") == shown
    cap = runtime_rows.default_cap()
    assert f"<td>C++ runner</td><td>{cap - 2977}</td><td>{cap}</td>" in page  # whole steps, not 1023.0
    assert "1 of 3 probes match" in page


def test_committed_runtime_results_parse():
    rows = runtime_rows.machine_rows()
    held = runtime_files(runtime_rows.RESULTS)
    assert len(rows) == len(held), (len(rows), held)  # every file with runtime values is a row, no more
    assert {row["machine"] for row in rows} == {path.parent.name for path in held}
    if not held:
        pytest.skip("no runtime results committed under results/releases")
    assert sum(len(row["limits"]) + len(row["many"]) + len(row["ladder"]) for row in rows) > 0
    for row in rows:
        for limit in row["limits"].values():
            assert 0 <= limit["limit"] <= limit["cap"]
        for values in row["many"].values():
            assert all(v is None or math.isnan(v) or v >= 0 for v in values.values())  # NaN: skipped
