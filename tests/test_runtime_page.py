"""``runtime.html`` and ``vkbench runtime``: tables read from asv result files.

The result files here are written in asv 0.6's on-disk layout (``result_columns``
plus one row per benchmark) with values of the kind the runtime suite records;
the committed results, when present, must parse the same way.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from vkbench.site import runtime_page

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


def test_rows_limits_and_per_n_values(tmp_path):
    sizes, runners = ["500", "1000", "1500"], ["'python'", "'native'"]
    native = [[None, 0.005, None, 0.011, None, None], [sizes, runners], "h", 0, 1]  # (n, runner) product
    _write_machine(tmp_path, "gpu-tracer-on", {
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
    })
    _write_machine(tmp_path, "cpu-only", {  # eager alone is not a runtime result
        "bench_runtime.ManyEager.time_eager": [[0.003, 0.006, 0.01], [sizes], "h", 0, 1],
        "bench_runtime.ManyRuntime.track_execute_seconds": [None, [sizes, runners], "h", 0, 1],
    })
    rows = runtime_page.machine_rows(tmp_path)
    assert [row["machine"] for row in rows] == ["gpu-tracer-on"]
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
    assert runtime_page.ladder_table(rows) == (
        ["entry", "gpu-tracer-on (C++ runner)"], [["act/model", "lowered"], ["tdmpc/pi", "matches"]])
    page = runtime_page.render(rows, [])
    assert "How far each policy entry gets on Vulkan" in page
    assert "gpu-tracer-on" in page and "5.50" in page and "cpu-only" not in page


def test_committed_runtime_results_parse():
    rows = runtime_page.machine_rows()
    for row in rows:
        for limit in row["limits"].values():
            assert 0 <= limit["limit"] <= limit["cap"]
        for values in row["many"].values():
            assert all(v is None or math.isnan(v) or v >= 0 for v in values.values())  # NaN: skipped
