"""Events: the changes table told once per commit, on asv result files written in a temp dir.

A small main line of four classes and two release tags off it: a count improving at one commit, two
VLA entries failing at another with flatc lines that differ only in a byte offset, and release steps
that either repeat a main-line event or cannot be placed on one.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from asv_json import count_row, write_result

from vkbench.cli import main
from vkbench.commits.classes import Classes, CommitClass
from vkbench.results import sidecar
from vkbench.results.asv_files import read_dir
from vkbench.results.events import ReleaseBases, explain
from vkbench.results.model import Failure, Provenance
from vkbench.site.dashboard.headlines import upstream_headline
from vkbench.site.dashboard.views import Upstream
from vkbench.suite import catalogue

START, M0, M1, M2, M3 = (c * 40 for c in "01234")
R1, R2 = "e" * 40, "f" * 40
CPU, VLA = catalogue.PROBE_CPU_OPS.name, catalogue.VLA_CPU_OPS.name
ENTRIES = ["'pi0/prefix'", "'xvla/prefix'", "'pi0/denoise_step'", "'eo1/denoise_step'"]
NAN = math.nan
REGISTRY = "backends/vulkan/op_registry.py"
FLATC = ("CalledProcessError: Command '['flatc', '--binary', 'schema.json']' returned non-zero exit status "
         "1. error: schema.json:1: {}: error: cannot parse value starting with: -")


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, Classes, ReleaseBases]:
    results = tmp_path / "results"
    main = {M0: ([2], [18, 88, 37, NAN]), M1: ([1], [18, 88, NAN, NAN]), M2: ([1], [NAN, NAN, NAN, NAN]),
            M3: ([1], [NAN, NAN, 36, 30])}
    for date, (commit, (mish, vla)) in enumerate(main.items(), 1):
        write_result(results, commit, date, {CPU: count_row(["'mish'"], mish), VLA: count_row(ENTRIES, vla)})
    # each main-line run selected some entries (the NaN of the others is "not run", not "failed")
    selected = {M0: "(pi0|xvla)/prefix|pi0/denoise_step", M1: "(pi0|xvla)/prefix", M2: "(pi0|xvla)/prefix",
                M3: "(pi0|eo1)/denoise_step"}
    for commit, entries in selected.items():
        sidecar.merge(results / "box" / f"{commit[:8]}-virtualenv-py3.12.json",
                      patterns={VLA: rf"^bench_policies\.VLAPolicyLowering\.track_cpu_ops\('({entries})'\)"})
    failed = [(VLA, (entry,), Failure("preprocess", FLATC.format(offset)))
              for entry, offset in (("pi0/prefix", 4220), ("xvla/prefix", 13911))]
    sidecar.merge(results / "box" / f"{M2[:8]}-virtualenv-py3.12.json", failures=failed)
    for date, commit, tag, mish, vla in ((5, R1, "v1.3.1", 2, [18, 88, 37, 31]), (6, R2, "v1.4.0", 1,
                                                                                  [NAN, NAN, 36, 30])):
        path = write_result(results, commit, date, {CPU: count_row(["'mish'"], [mish]),
                                                    VLA: count_row(ENTRIES, vla)})
        sidecar.merge(path, Provenance(release=tag))
    classes = Classes("gate", f"{START[:8]}..{M3[:8]}", [
        CommitClass(M0, "d0", "1.4.1", [M0]),
        CommitClass(M1, "d1", "1.4.1", [M1], [REGISTRY], "Add gt.Scalar (#21070)", "21070"),
        CommitClass(M2, "d2", "1.4.1", [M2], [REGISTRY], "Add eq.Scalar (#20383)", "20383"),
        CommitClass(M3, "d3", "1.5.0", [M3], ["base wheel 1.4.1 -> 1.5.0"])])
    bases = ReleaseBases({R1: {"tag": "v1.3.1", "base": START}, R2: {"tag": "v1.4.0", "base": M2}})
    return results, classes, bases


def test_one_event_per_commit_with_its_reasons_once(history: tuple[Path, Classes, ReleaseBases]) -> None:
    results, classes, bases = history
    table = explain(read_dir(results), classes, {}, bases)
    events = {e.commit: e for e in table.events}
    assert list(events)[0] == M2 and table.events[0].regression  # regressing events first
    failing = events[M2]
    assert (failing.subject, failing.pr, failing.files, failing.exact) == (
        "Add eq.Scalar (#20383)", "20383", ["backends/vulkan/op_registry.py"], True)
    # the two entries fail with flatc lines that differ only in the byte offset: one reason
    assert failing.reasons == ["preprocess: " + FLATC.format("…")]
    # the release line's v1.3.1 -> v1.4.0 repeats it: placed on this event, not a row of its own event
    assert sorted((r.param, r.line) for r in failing.rows) == [
        ("pi0/prefix", "main"), ("pi0/prefix", "releases"), ("xvla/prefix", "main"),
        ("xvla/prefix", "releases")]
    assert failing.repeated_on == ["v1.3.1..v1.4.0"]
    assert "pi0/prefix" in failing.repro and "xvla/prefix" in failing.repro and failing.repro.endswith(
        f"{M2[:8]}^ {M2[:8]}")
    assert "older suite" not in failing.confirmation and "not confirmed yet" in failing.confirmation
    improving = events[M1]
    assert [(r.param, r.before, r.after, r.line) for r in improving.rows] == [("mish", 2, 1, "main"),
                                                                            ("mish", 2, 1, "releases")]


def test_release_steps_without_a_main_line_event_say_where_to_record(
        history: tuple[Path, Classes, ReleaseBases]) -> None:
    results, classes, bases = history
    table = explain(read_dir(results), classes, {}, bases)
    unplaced = {r.param: r for r in table.changes if r.line == "releases" and r.event == R2}
    assert set(unplaced) == {"pi0/denoise_step", "eo1/denoise_step"}
    # pi0/denoise_step was recorded on main at M0 (37), inside the window: the search starts there
    where = "not placed: record main-line commits between {} and {}"
    assert unplaced["pi0/denoise_step"].note == where.format(M0[:8], M2[:8])
    # eo1/denoise_step was never recorded between the tags' bases
    assert unplaced["eo1/denoise_step"].note == where.format(START[:8], M2[:8])
    (release,) = [e for e in table.events if e.commit == R2]
    assert release.line == "releases" and release.subject == "between release tags v1.3.1..v1.4.0"
    assert len(release.notes) == 2
    # without the bases nothing is placed, and the row says how to get them
    bare = explain(read_dir(results), classes, {}, None)
    assert all("bases are unknown" in r.note for r in bare.changes if r.line == "releases")


def test_json_keeps_the_row_keys_and_adds_events(history: tuple[Path, Classes, ReleaseBases], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    results, classes, bases = history
    classes_file = classes.write(tmp_path / "history" / "classes-gate.json")
    bases.write(tmp_path / "history" / "release-bases.json")
    assert main(["changes", "--results", str(results), "--classes", str(classes_file), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"commits", "changes", "events", "left_out", "left_out_steps", "dropped"} <= set(out)
    kept = {"benchmark", "param", "before", "after", "commit", "previous", "exact", "subject", "pr", "files",
            "reason_before", "reason_after", "repro", "line", "suite", "regression"}
    added = {"event", "confirmed", "suite_before", "suite_after"}
    assert all(kept | added <= set(row) for row in out["changes"])
    row = next(r for r in out["changes"] if r["param"] == "pi0/prefix" and r["line"] == "releases")
    assert (row["event"], row["confirmed"], row["suite_after"]) == (M2, None, "suite-0123456789abcdef")
    assert [e["commit"] for e in out["events"]][0] == M2 and out["dropped"] == 0
    assert main(["changes", "--results", str(results), "--classes", str(classes_file)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("4 events (1 regressing)")
    assert text.count("cannot parse value starting with") == 1  # the reason once
    assert f"REGRESSION {M2[:8]} #20383 Add eq.Scalar (#20383)" in text
    assert "also on the release line: v1.3.1..v1.4.0" in text


def test_the_headline_names_the_regressing_events(history: tuple[Path, Classes, ReleaseBases]) -> None:
    results, classes, bases = history
    table = explain(read_dir(results), classes, {}, bases)
    commits = [(c, i) for i, c in enumerate([M0, M1, M2, M3], 1)]
    text = upstream_headline(Upstream(commits, [], {}, table.changes))
    assert f"1 regressing event: {M2[:8]} “Add eq.Scalar (#20383)”: pi0/prefix, xvla/prefix fail" in text
    assert f"3 improving events: {M1[:8]} “Add gt.Scalar (#21070)”: mish 2 → 1 CPU ops" in text
    assert "regressions:" not in text  # events, not row counts
