"""The bug list (issue 23): rows from the committed results, probes, reproducers, ``vkbench bugs``, bugs.html.

The reproducers are run as a user runs them: ``python repro/<id>.py`` in a child process with this venv's
interpreter, each asserting the ``Expected:`` line its docstring documents. Those that need a Vulkan
runtime lower here and then exit 2 (the PyPI wheel has no VulkanBackend).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from vkbench.paths import RESULTS_ROOT
from vkbench.results import bug_knowledge
from vkbench.results import bug_rows as bugs
from vkbench.results.bug_knowledge import KnowledgeError, knowledge
from vkbench.results.bug_rows import RUNTIME_STAGES, UPSTREAM, BugRow, HistoryPoint, bug_rows, history_range
from vkbench.results.ladder import rungs_reached
from vkbench.results.records import read_recorded
from vkbench.results.repro_runs import docstring_line, needs_vulkan
from vkbench.results.surveys import latest_survey

ROOT = Path(__file__).resolve().parent.parent
REPRO = ROOT / "repro"
#: Rows owned by ExecuTorch or torch that still lack a probe or a reproducer: a performance row has no
#: failure for a probe to record (docs: its note; its what-if is measured).
KNOWN_GAPS: dict[str, str] = {"partition_reexports_pattern_graphs": "no probe"}
JSON_KEYS = ["id", "stage", "error", "owner", "entries", "probe", "repro", "first_bad", "fixed_in"]


@pytest.fixture(scope="module")
def rows() -> list[BugRow]:
    return bug_rows()


@pytest.fixture(scope="module")
def newest_runtime() -> str:
    """The newest recorded runtime commit, from the data: the runtime machines' ladders (their main-line
    columns) and the reproducers' runs by upstream commits, placed on the runtime classes' line."""
    from vkbench.results.runtime_timeline import timelines

    recorded = read_recorded(RESULTS_ROOT)
    classes = recorded.runtime_classes
    assert classes is not None
    index = {c: i for i, k in enumerate(classes.classes) for c in k.commits}
    ladder = [(c.runtime_class, c.commit) for timeline in timelines(recorded.upstream, classes)
              for c in timeline.main_line()]
    runs = [(index[r.commit], r.commit) for r in recorded.repro_history if r.commit in index]
    assert ladder, "no runtime machine recorded a commit of the runtime classes"
    return max(ladder + runs)[1][:8]


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text())) or ""


def _expected(path: Path, key: str = "Expected") -> str:
    line = docstring_line(path, key)
    assert line, f"{path.name}: no '{key}:' line in its docstring"
    return line


# -- the rows ------------------------------------------------------------------------------------------

def test_ids_are_unique_and_owners_known(rows):
    assert len({row.id for row in rows}) == len(rows)
    assert all(row.owner in bugs.OWNERS for row in rows)
    assert all(row.stage in (*bugs.LOWERING_STAGES, *RUNTIME_STAGES) for row in rows), [r.stage for r in rows]


def test_every_upstream_row_has_a_probe_and_a_reproducer_but_the_known_gaps(rows):
    from vkbench.workloads.probes import PROBES

    gaps = {}
    for row in rows:
        if row.probe:
            assert row.probe in PROBES, row.id
        if row.repro:
            assert (ROOT / row.repro).is_file(), row.repro
        if row.owner in UPSTREAM and not (row.probe and row.repro):
            missing = (("no probe", row.probe), ("no reproducer", row.repro))
            gaps[row.id] = ", ".join(what for what, has in missing if not has)
    assert gaps == KNOWN_GAPS


def test_every_runtime_row_has_a_probe_the_ladder_follows(rows):
    """Every row of a runtime stage names a probe of the runtime ladder (``bench_runtime.ProbeLadder``'s
    grid, the catalogue's probes), so each can be followed per commit; the segfault's is ``clone_5d``."""
    from vkbench.suite.catalogue import PROBE_WORKLOADS

    runtime = [row for row in rows if row.stage in RUNTIME_STAGES]
    assert runtime and all(f"probe/{row.probe}" in PROBE_WORKLOADS for row in runtime), \
        [row.id for row in runtime if f"probe/{row.probe}" not in PROBE_WORKLOADS]
    assert next(r for r in runtime if r.id == "load_segfault_input_staging").probe == "clone_5d"


def test_every_blocked_entry_has_a_classified_row(rows):
    """The entries blocked before delegation (16 on 1.5.1), and the default-config blocks, all have a row."""
    survey = latest_survey(RESULTS_ROOT)
    assert survey is not None
    policy = survey.rows
    blocked = {row["entry"] for row in policy if row["status"] != "lowered"}
    lowering = [row for row in rows if row.stage not in RUNTIME_STAGES]
    assert blocked <= {entry for row in lowering for entry in row.entries}
    assert not [row.id for row in rows if row.owner == bugs.NOT_CLASSIFIED]
    by_id = {row.id: row for row in rows}
    assert by_id["partition_split_one_piece"].entries == ["gaussian_actor/deterministic"]
    assert sorted(by_id["to_edge_non_core_no_kernel"].entries) == ["smolvla/prefix", "vqbet/rollout"]
    assert by_id["to_edge_pending_unbacked_retry"].entries == []  # the retry re-exports since 2026-12-05
    assert len(by_id["to_edge_view_as_complex_grad"].entries) == 3


def test_workarounds_carry_the_coverage_they_reach(rows):
    by_id = {row.id: row for row in rows}
    chunk = by_id["partition_split_one_piece"].what_if
    assert chunk == [{"entry": "gaussian_actor/deterministic_without_chunk", "status": "lowered",
                      "cpu_percent": 2.703, "nodes_cpu": 1, "nodes_total": 37, "vulkan_programs": 2,
                      "allowed_on_cpu": []}]
    rollout = by_id["to_edge_non_core_no_kernel"].what_if
    assert rollout[0]["entry"] == "vqbet/rollout"
    assert rollout[0]["allowed_on_cpu"] == ["aten.multinomial.default"]
    assert by_id["export_fastwam_prompt_zeroing"].what_if[0]["status"].startswith("blocked at preprocess")


def test_runtime_rows_agree_with_the_ladder(rows):
    """An entry a load row names stops at load on every recorded machine; the unrecorded row has the rest."""
    rungs = rungs_reached(read_recorded(RESULTS_ROOT).releases)
    named = set()
    for row in rows:
        if row.stage == "load":
            for entry in row.entries:
                assert set(rungs[entry].values()) == {"lowered"}, (row.id, entry)
                named.add(entry)
    stuck = {e for e, r in rungs.items() if not e.startswith("probe/") and set(r.values()) == {"lowered"}}
    assert stuck == named
    by_id = {row.id: row for row in rows}
    mha = by_id["load_is_tensor_ref"].probe_rungs  # the probe stops where act/model does
    assert mha and set(mha.values()) == {"lowered"}
    assert set(rungs["diffusion/unet_step"].values()) == {"runs"}


def test_first_bad_and_fixed_in_come_from_the_recorded_history(rows, newest_runtime):
    by_id = {row.id: row for row in rows}
    logical_not = by_id["load_missing_logical_not"]  # delegated whole from #21070 on
    found = (logical_not.first_bad, logical_not.last_good, logical_not.fixed_in)
    assert found == ("666ba0b1", "8b14fc2c", f"open at {newest_runtime}")  # still stops at load there
    for row in rows:  # every runtime row with a probe is dated, on the runtime side at least
        if row.stage in RUNTIME_STAGES and row.probe:
            assert row.first_bad and row.fixed_in == f"open at {newest_runtime}", (row.id, row.fixed_in)
    assert "load_unrecorded" not in by_id  # every entry the ladder stops at load has a stored line
    split = by_id["partition_split_one_piece"]  # fails on every recorded commit: older than the range
    assert (split.first_bad, split.fixed_in) == ("", "") and "of" in split.history


def test_a_fix_on_a_release_branch_only_says_where_main_stands(rows):
    """mha_cross lowers on v1.3.x, fails on main from 76d6b1e5, lowers on 1.5.1: 1.5.1's
    ``_replace_non_finite_in_json`` is on its release branch only, so the row says main is still open at
    the newest main commit whose record holds the probe (read from the data, not written here)."""
    recorded = read_recorded(RESULTS_ROOT)
    main = [p for p in bugs.probe_history("mha_cross", recorded) if p.main]
    assert main and main[-1].failed  # the newest recorded main commit still fails
    release = [p.label for p in bugs.probe_history("mha_cross", recorded) if not p.main and not p.failed]
    assert "3b606839 (v1.5.1)" in release
    flatc = next(row for row in rows if row.id == "preprocess_flatc_infinity")
    assert flatc.first_bad == "76d6b1e5" and flatc.last_good and flatc.fix_branch == "release"
    assert flatc.fixed_in == f"3b606839 (v1.5.1, release branch); open on main at {main[-1].label}"
    assert flatc.open_on_main == main[-1].label
    assert {row.id for row in rows if row.open_on_main} == {"preprocess_flatc_infinity"}


def test_branch_fix_reads_main_at_its_newest_recorded_commit():
    from vkbench.results.bug_rows import branch_fix

    bad, good = HistoryPoint("m2", True, None, main=True), HistoryPoint("m2", False, 0.0, main=True)
    release = HistoryPoint("aa (v1.5.1)", False, 3.0)
    older = HistoryPoint("m1", True, None, main=True)
    assert branch_fix("aa (v1.5.1)", [older, bad, release], "fails") == (
        "aa (v1.5.1, release branch); open on main at m2", "m2")
    assert branch_fix("aa (v1.5.1)", [older, good, release], "fails") == (
        "aa (v1.5.1, release branch); good on main at m2", "")
    assert branch_fix("aa", [release], "fails") == ("aa (release branch); main not recorded", "")
    assert branch_fix("", [older], "fails") == ("", "")  # no fix recorded: nothing to say


def test_runtime_dates_summary_counts_what_the_rows_say(rows, newest_runtime):
    """How many runtime rows predate the range and how many are open at the newest recorded runtime commit,
    from the rows themselves; the commits are the runtime history's, oldest first."""
    from vkbench.results.bug_rows import runtime_summary

    recorded = read_recorded(RESULTS_ROOT)
    dates = runtime_summary(rows, recorded)
    runtime = [row for row in rows if row.stage in RUNTIME_STAGES]
    start = recorded.runtime_classes.range.split("..")[0][:8]
    assert dates.newest == newest_runtime and dates.range_start == start and dates.commits[0] == start
    assert list(dates.rows) == [row.id for row in runtime]
    assert list(dates.predating) == [row.id for row in runtime if row.first_bad == f"before {start}"]
    open_at = f"open at {newest_runtime}"
    assert list(dates.open_at_newest) == [row.id for row in runtime if row.fixed_in == open_at]
    assert len(dates.commits) == len(set(dates.commits)) >= max(dates.ladder_commits,
                                                                dates.reproducer_commits)
    assert dates.sentence() == (f"{len(dates.predating)} of {len(runtime)} runtime rows predate the range; "
                                f"{len(dates.open_at_newest)} are open at {newest_runtime}; the runtime "
                                f"history holds {len(dates.commits)} recorded runtime commits")


def test_readme_says_the_runtime_dates_as_vkbench_bugs_json_does(capsys):
    """README's bug-list sentence is what ``vkbench bugs --json`` computes (its numbers and commit)."""
    from vkbench.cli import main

    assert main(["bugs", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    dates, listed = out["runtime_dates"], out["rows"]
    runtime = [item for item in listed if item["stage"] in RUNTIME_STAGES]
    assert dates["rows"] == len(runtime)
    before, open_at = f"before {dates['range_start']}", f"open at {dates['newest_commit']}"
    assert dates["predate_range"] == sum(item["first_bad"] == before for item in runtime)
    assert dates["open_at_newest"] == sum(item["fixed_in"] == open_at for item in runtime)
    assert dates["newest_commit"] == dates["commits"][-1]
    assert dates["recorded_commits"] == len(dates["commits"])
    said = (f"{dates['predate_range']} of {dates['rows']} runtime rows predate the range; "
            f"{dates['open_at_newest']} are open at {dates['newest_commit']}; the runtime history holds "
            f"{dates['recorded_commits']} recorded runtime commits (of {dates['runtime_classes']} runtime "
            "classes)")
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert said in readme, re.search(r"Runtime dates: [^.]*\.", readme)


def test_history_range():
    def points(*bad: bool) -> list[HistoryPoint]:
        return [HistoryPoint(f"c{i}", flag, None) for i, flag in enumerate(bad)]

    assert history_range(points(False, True, True, False), "fails")[:3] == ("c1", "c3", "c0")
    assert history_range(points(True, True, False), "fails")[:3] == ("", "c2", "")
    assert history_range(points(False, True, False, True), "fails")[:3] == ("c3", "", "c2")
    assert history_range(points(False, False), "fails")[:3] == ("", "", "")
    assert history_range([], "fails")[3] == "no recorded commit holds the probe yet"
    whole = [HistoryPoint("a", False, 2.0), HistoryPoint("b", False, None), HistoryPoint("c", False, 0.0)]
    assert history_range(whole, "whole")[:3] == ("c", "", "a")  # b recorded no CPU ops: skipped


def test_an_unknown_block_gets_an_unclassified_row(tmp_path):
    (tmp_path / "policies").mkdir()
    rows = [{"entry": "x/new", "status": "blocked", "stage": "to_edge", "error_type": "ValueError",
             "error": "odd shape 0x7f12 at u12"},
            {"entry": "x/other", "status": "blocked", "stage": "to_edge", "error_type": "ValueError",
             "error": "odd shape 0x9a00 at u3"}]
    (tmp_path / "policies" / "executorch-9.9.9-test.json").write_text(json.dumps({"rows": rows}))
    found = bug_rows(tmp_path)
    extra = [row for row in found if row.owner == bugs.NOT_CLASSIFIED]
    assert [(row.stage, row.entries) for row in extra] == [("to_edge", ["x/new", "x/other"])]
    assert extra[0].error == "ValueError: odd shape 0x… at u…"  # the failure key `vkbench changes` reads


def test_a_recorded_object_and_its_folder_give_the_same_rows(tmp_path):
    """The site passes what it already read; the CLI passes the folder."""
    (tmp_path / "policies").mkdir()
    rows = [{"entry": "x/new", "status": "blocked", "stage": "export", "error_type": "E", "error": "m"}]
    (tmp_path / "policies" / "executorch-9.9.9-test.json").write_text(json.dumps({"rows": rows}))
    assert bug_rows(read_recorded(tmp_path)) == bug_rows(tmp_path)


# -- the knowledge file (vkbench/results/bugs.toml) ---------------------------------------------------

def test_the_knowledge_file_holds_every_row_once():
    known = knowledge()
    ids = [bug.id for bug in (*known.bugs, known.unrecorded_load)]
    assert len(ids) == len(set(ids)) == 29
    assert known.unrecorded_load.owner == bug_knowledge.NOT_RECORDED
    by_id = {bug.id: bug for bug in known.bugs}
    assert by_id["load_make_ivec2"].needs.startswith("a Vulkan-enabled ExecuTorch")  # the stage's default
    assert by_id["export_fastwam_rope_grid"].needs == "torch 2.11.0 (torch.export only)"
    assert by_id["load_is_tensor_ref"].repro == "repro/load_is_tensor_ref.py"


@pytest.mark.parametrize(("change", "problem"), [
    (('owner = "LeRobot model code"', 'owner = "LeRobot"'),
     "[[bug]] 1 (export_ddpm_previous_timestep): owner 'LeRobot' is not one of"),
    (('only = ["diffusion/sample_loop"]', 'only = "diffusion/sample_loop"'),
     "[[bug]] 1 (export_ddpm_previous_timestep): 'only' must be a list of strings"),
    (('id = "build_hub_offline"', 'id = "build_hub_offline"\nowners = "x"'),
     "[[bug]] 9 (build_hub_offline): unknown key 'owners'"),
    (('id = "to_edge_empty_permuted"', 'id = "to_edge_view_as_complex_grad"'),
     "(to_edge_view_as_complex_grad): id 'to_edge_view_as_complex_grad' is used by an earlier entry"),
    (('pattern = "cannot', 'pattern = "(cannot'), "(preprocess_flatc_infinity): pattern is not a regular"),
    (("schema = 1", "schema = 2"), "schema is 2, this vkbench reads 1"),
    (('fix_branch = "release"', 'fix_branch = "main"'),
     "(preprocess_flatc_infinity): fix_branch 'main' is not"),
    (('history = "fails"\nfix_branch', 'fix_branch'), "(preprocess_flatc_infinity): a 'fix_branch' needs a"),
    (('lowering = "torch', 'lowering = torch'), "not readable TOML"),
])
def test_a_bad_knowledge_entry_names_the_file_and_the_entry(tmp_path, change, problem):
    old, new = change
    text = bug_knowledge.SOURCE.read_text()
    assert old in text
    bad = tmp_path / "bugs.toml"
    bad.write_text(text.replace(old, new, 1))
    with pytest.raises(KnowledgeError) as raised:
        bug_knowledge.load(bad)
    assert str(raised.value).startswith(f"{bad}: ") and problem in str(raised.value)
    assert "\n" not in str(raised.value)


# -- the probes ----------------------------------------------------------------------------------------

#: Rows whose failure the pinned stack no longer has (their reproducer shows it with the fix removed).
FIXED_ON_PINNED = {"preprocess_flatc_infinity"}
FAILING_PROBES = [b for b in knowledge().bugs if b.probe and b.history == "fails"
                  and b.id not in FIXED_ON_PINNED and b.stage in ("to_edge", "partition", "preprocess")]


#: The registered pattern graphs, built once for all the probes below (the bug row's what-if,
#: ``pattern_cache.cache_working``: the same partitions, without re-exporting three rope graphs per call).
PATTERN_GRAPHS: dict = {}


@pytest.mark.parametrize("bug", FAILING_PROBES, ids=lambda b: b.probe)
def test_the_probe_fails_like_its_row(bug):
    """On the pinned stack each lowering row's probe fails at the row's stage with the row's error."""
    from vkbench.results.pattern_cache import cache_working
    from vkbench.workloads.probes import probe_coverage

    with cache_working(PATTERN_GRAPHS or None) as cached:
        PATTERN_GRAPHS.update(cached)
        found = probe_coverage(bug.probe)
    assert found.get("failed_stage") == bug.stage, found
    assert re.search(bug.pattern, found["error"]), found["error"]


# -- the reproducers -----------------------------------------------------------------------------------

REPROS = sorted(REPRO.glob("*.py"))
ALLOWED_IMPORTS = {"torch", "executorch", "sys", "subprocess", "itertools", "time"}


def test_every_reproducer_belongs_to_a_row_and_is_standalone():
    ids = {bug.id for bug in knowledge().bugs}
    assert {path.stem for path in REPROS} <= ids
    for path in REPROS:
        tree = ast.parse(path.read_text())
        roots = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names}
        roots |= {node.module.split(".")[0] for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom) and node.module}
        assert roots <= ALLOWED_IMPORTS, (path.name, roots)
        assert len(path.read_text().splitlines()) <= 60, path.name
        doc = _docstring(path)
        assert f"Row: {path.stem} " in doc and "Needs: " in doc and "Expected: " in doc, path.name


#: Runs reproducers one after another in one interpreter (torch and executorch are imported once,
#: not twenty times): each as ``__main__`` with its own argv and cwd, its exit status and everything it
#: wrote kept (file descriptors 1 and 2, so a tool's own stderr, flatc's, is there too). Each runs with the
#: pattern graphs built once (``pattern_cache.cache_working``, the perf row's what-if: the same partitions,
#: without re-exporting three rope graphs per partition call), except the reproducer of that row, which
#: shows the re-exports; an item with ``--unfixed`` patches executorch for good, so it goes last.
_DRIVER = """
import contextlib, json, os, runpy, sys, tempfile
from vkbench.results.pattern_cache import cache_working
done, shared = {}, None
for item in json.loads(sys.argv[1]):
    path, args = item[0], item[1:]
    code = 0
    os.chdir(os.path.dirname(path))
    sys.argv = [path, *args]
    with tempfile.TemporaryFile(mode="w+") as out:
        sys.stdout.flush(); sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(out.fileno(), 1); os.dup2(out.fileno(), 2)
        try:
            with contextlib.ExitStack() as stack:
                if os.path.basename(path) != "partition_reexports_pattern_graphs.py":
                    shared = stack.enter_context(cache_working(shared))
                runpy.run_path(path, run_name="__main__")
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        except BaseException as error:  # a reproducer that crashes is a failed check, not a lost run
            code = 99
            print(f"{type(error).__name__}: {error}")
        finally:
            sys.stdout.flush(); sys.stderr.flush()
            os.dup2(saved[0], 1); os.dup2(saved[1], 2); os.close(saved[0]); os.close(saved[1])
        out.seek(0)
        done[" ".join(item)] = [code, out.read()]
sys.stdout.write(json.dumps(done))
"""
#: The flatc row's reproducer with its fix removed: what the affected commits do.
UNFIXED = [str(REPRO / "preprocess_flatc_infinity.py"), "--unfixed"]


@pytest.fixture(scope="module")
def ran(request: pytest.FixtureRequest) -> dict[str, tuple[int, str]]:
    """The exit status and output of every reproducer a selected test reads (all of them with the slow
    set; in CI the runtime ones, which only lower here, are left to it), in one interpreter."""
    def path_of(item: pytest.Item) -> Path | None:
        params = getattr(getattr(item, "callspec", None), "params", {})
        return params.get("path") if "ran" in getattr(item, "fixturenames", ()) else None

    wanted = {path_of(item) for item in request.session.items}
    wanted.add(REPRO / "partition_reexports_pattern_graphs.py")
    items = [[str(path)] for path in REPROS if path in wanted] + [UNFIXED]
    done = subprocess.run([sys.executable, "-c", _DRIVER, json.dumps(items)], capture_output=True, text=True,
                          timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    return {key: (code, output) for key, (code, output) in json.loads(done.stdout).items()}


@pytest.mark.parametrize("path", [p for p in REPROS if not needs_vulkan(p)], ids=lambda p: p.stem)
def test_lowering_reproducer_shows_its_documented_error(path, ran):
    code, output = ran[str(path)]
    assert code == 0, output[-2000:]
    assert _expected(path) in output, output[-2000:]


def test_the_performance_reproducer_sees_both_partitions_export(ran):
    """``partition_reexports_pattern_graphs``: two consecutive partitions export the three pattern graphs
    each (llama RoPE once, HF RoPE twice), and the registered functions are the ones without the cache."""
    code, output = ran[str(REPRO / "partition_reexports_pattern_graphs.py")]
    assert code == 0, output[-2000:]
    counts = re.findall(r"^partition (\d): ([\d.]+) s CPU, (\d+) exports$", output, re.M)
    assert [(number, exports) for number, _, exports in counts] == [("1", "3"), ("2", "3")], output[-2000:]
    for name in ("get_rope_graphs", "get_hf_rope_graphs"):
        assert f"registered {name} lacks its lru_cache (CacheInfo(hits=0, misses=0" in output


def test_the_fixed_flatc_failure_shows_without_the_fix(ran):
    """With the fix removed, flatc's own message (on its stderr) shows as the row documents it."""
    code, output = ran[" ".join(UNFIXED)]
    assert code == 0, output[-2000:]
    expected = _expected(REPRO / "preprocess_flatc_infinity.py", "Expected with --unfixed")
    assert expected in output, output[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in REPROS if needs_vulkan(p)], ids=lambda p: p.stem)
def test_runtime_reproducer_lowers_then_asks_for_a_vulkan_build(path, ran):
    """Here (no VulkanBackend) it lowers and exits 2; on a Vulkan build it must show its error."""
    code, output = ran[str(path)]
    if "skipped: this executorch has no VulkanBackend" in output:
        assert code == 2 and "lowered: " in output, output[-2000:]
    else:  # a Vulkan-enabled interpreter runs the suite
        assert _expected(path) in output, output[-2000:]


# -- the command line and the site ---------------------------------------------------------------------

def test_cli_json_lists_every_row_with_the_promised_keys(capsys):
    from vkbench.cli import main

    assert main(["bugs", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sorted(out) == ["rows", "runtime_dates"]
    listed = out["rows"]
    assert [item["id"] for item in listed] == [row.id for row in bug_rows()]
    flatc = next(item for item in listed if item["id"] == "preprocess_flatc_infinity")
    assert flatc["fix_branch"] == "release" and flatc["open_on_main"]
    assert flatc["fixed_in"].endswith(f"open on main at {flatc['open_on_main']}")
    for item in listed:
        assert list(item)[:len(JSON_KEYS)] == JSON_KEYS
        assert isinstance(item["entries"], list)
        assert item["repro"] == "" or not Path(item["repro"]).is_absolute()


def test_cli_table_and_owner_filter(capsys):
    from vkbench.cli import main

    assert main(["bugs", "--owner", "vulkan runtime"]) == 0
    out = capsys.readouterr().out
    assert "load_is_tensor_ref" in out and "split_one_piece" not in out and "Vulkan runtime" in out
    assert "Runtime dates: " in out and "runtime rows predate the range" in out
    assert main(["bugs", "--owner", "nobody"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no row is owned by 'nobody'" in err[0]


@pytest.fixture(scope="module")
def site_data(tmp_path_factory):
    """What a publish of the checkout's results reads (the site's one contract)."""
    from vkbench.site.load import load_site_data

    return load_site_data(tmp_path_factory.mktemp("html"), RESULTS_ROOT)


def test_bugs_page_is_offline_and_lists_every_row(tmp_path, rows, site_data):
    from vkbench.site import bugs_page, external_resources

    assert len(site_data.bugs) == len(rows)
    page = bugs_page.PAGE.write(tmp_path, site_data)
    assert page == tmp_path / "bugs.html"
    text = page.read_text()
    assert external_resources(page) == [] and "http" not in text.replace('href="index.html"', "")
    for row in rows:
        assert f'id="{row.id}"' in text
    assert 'href="index.html"' in text
    from vkbench.results.bug_rows import runtime_summary

    dates = runtime_summary(rows, read_recorded(RESULTS_ROOT))
    assert f"<b>Runtime dates:</b> {dates.sentence()} " in text  # the sentence README says
    flatc = next(row for row in rows if row.id == "preprocess_flatc_infinity")
    cell = text[text.index('id="preprocess_flatc_infinity"'):]
    assert f"fixed in {flatc.fixed_in}" in cell[:cell.index("</tr>")] and "open on main at" in flatc.fixed_in
    row_tag = text[:text.index('id="preprocess_flatc_infinity"')].rsplit("<tr ", 1)[1]
    assert " fixed" not in row_tag  # fixed on the release branch, still open on main


def test_dashboard_links_the_bug_list_from_blockers_and_ladder(site_data):
    from vkbench.site.dashboard.dashboard_page import blockers_section, ladder_section
    from vkbench.site.dashboard.views import load_ladder, load_survey

    assert any(link.href == "bugs.html" for link in site_data.links)
    assert 'href="bugs.html"' in blockers_section(load_survey(site_data)).body
    assert 'href="bugs.html"' in ladder_section(load_ladder(site_data)).body


# -- the recorded runs of the reproducers (results/bugs/repro-runs-<machine>.json) ----------------------

def test_a_run_record_round_trips_and_reaches_its_row(tmp_path):
    """A reproducer run on a build (here: this interpreter, two quick files) lands on its row."""
    from vkbench.execution import repros
    from vkbench.results import repro_runs

    fake = tmp_path / "repro"
    fake.mkdir()
    (fake / "to_edge_empty_permuted.py").write_text(
        '"""Doc.\n\nExpected: the failure text\n"""\nprint("noise")\nprint("error: the failure text here")\n')
    (fake / "to_edge_non_core_no_kernel.py").write_text(
        '"""Doc.\n\nExpected: never printed\n"""\nimport sys\nprint("lowered")\nsys.exit(1)\n')
    record = repros.run(sys.executable, "test-machine", sorted(fake.glob("*.py")))
    assert record.build.get("torch") and record.build.get("executorch")
    shown, missed = record.runs["to_edge_empty_permuted"], record.runs["to_edge_non_core_no_kernel"]
    assert (shown.reproduced, shown.rc, shown.line) == (True, 0, "error: the failure text here")
    assert (missed.reproduced, missed.rc, missed.line) == (False, 1, "lowered")
    results = tmp_path / "results"
    path = repro_runs.write(record, results / "bugs")
    assert path.name == "repro-runs-test-machine.json"
    assert repro_runs.read_all(results / "bugs")[0] == record
    (results / "bugs" / "repro-runs-torn.json").write_text("{")  # unreadable: skipped, not fatal
    by_id = {row.id: row for row in bug_rows(results)}
    assert by_id["to_edge_empty_permuted"].repro_runs["test-machine"]["reproduced"] is True
    assert by_id["to_edge_non_core_no_kernel"].repro_runs["test-machine"]["reproduced"] is False


def test_a_run_added_later_keeps_its_own_date_and_build(tmp_path):
    """``--run-repros --only``: one reproducer added to a record whose build is gone keeps the others'
    runs, and the added run says its date and where its build differs (here: torch)."""
    from vkbench.results import repro_runs
    from vkbench.results.repro_runs import ReproRecord, ReproRun

    build = {"executorch": "1.5.1", "git_version": "3b60", "torch": "2.13.0", "vulkan_backend": True}
    old = ReproRecord("m", "2026-12-05T22:01Z", "py", build,
                      runs={"load_make_ivec2": ReproRun(0, True, "make_ivec2", "error: make_ivec2", 1.0)})
    added = ReproRecord("m", "2026-12-07T10:00Z", "py", {**build, "torch": "2.11.0"},
                        runs={"load_segfault_input_staging": ReproRun(0, True, "SIGSEGV", "error: x", 2.0)})
    merged = repro_runs.merge(old, added)
    assert (merged.date, merged.build, merged.runs["load_make_ivec2"]) == (old.date, build,
                                                                          old.runs["load_make_ivec2"])
    new = merged.runs["load_segfault_input_staging"]
    assert (new.date, new.build) == ("2026-12-07T10:00Z", {"torch": "2.11.0"})
    assert repro_runs.merge(None, added) is added
    with pytest.raises(ValueError):
        repro_runs.merge(old, ReproRecord("other", "d", "py", build))
    path = repro_runs.write(merged, tmp_path / "bugs")
    assert "date" not in json.loads(path.read_text())["runs"]["load_make_ivec2"]  # the record's own
    assert repro_runs.read("m", tmp_path / "bugs") == merged
    by_id = {row.id: row for row in bug_rows(tmp_path)}
    shown = by_id["load_segfault_input_staging"].repro_runs["m"]
    assert (shown["date"], shown["torch"], shown["executorch"]) == ("2026-12-07T10:00Z", "2.11.0", "3b60")
    assert by_id["load_make_ivec2"].repro_runs["m"]["torch"] == "2.13.0"


def test_every_runtime_row_is_dated_by_the_runtime_history(rows):
    """Every row that stops at load or run has a first bad and a fixed-in commit (or "before"/"open at")."""
    undated = [row.id for row in rows if row.stage in RUNTIME_STAGES and row.owner in UPSTREAM
               and not (row.first_bad and row.fixed_in)]
    assert undated == []


def test_a_row_without_a_probe_is_dated_by_its_reproducer_over_runtime_commits(tmp_path):
    """``repro-run --commit``: each commit's runtime ran the reproducer; reproduced is bad, a clean run
    (exit 0, not printed) good, and a run stopped by another failure (a missing op) says nothing."""
    from vkbench.commits.classes import Classes, CommitClass
    from vkbench.results import repro_runs
    from vkbench.results.bug_rows import reproducer_dates
    from vkbench.results.repro_runs import ReproRecord, ReproRun

    base, c1, c2, c3 = ("0" * 40, "1" * 40, "2" * 40, "3" * 40)
    classes = Classes("runtime", f"{base[:8]}..{c3[:8]}", [
        CommitClass(c1, "d1", "1.4.1", [c1]), CommitClass(c2, "d2", "1.4.1", [c2]),
        CommitClass(c3, "d3", "1.5.1", [c3])])
    crash = ReproRun(-11, True, "SIGSEGV", "error: SIGSEGV", 0.1)
    clean = ReproRun(0, False, "SIGSEGV", "ok", 0.1)
    other = ReproRun(-6, False, "SIGSEGV", "Missing operator: aten.gt.Scalar", 0.1)

    def at(commit: str, run: ReproRun) -> ReproRecord:
        return ReproRecord("lava", "2026-12-06T19:00Z", "pte_runner", {"commit": commit}, runs={"seg": run})

    folder = tmp_path / "bugs" / "upstream"
    runs = ((base, crash), (c1, other), (c2, crash), (c3, clean))
    paths = [repro_runs.write(at(commit, run), folder) for commit, run in runs]
    assert [p.name for p in paths][0] == "repro-runs-lava-00000000.json"
    records = repro_runs.read_all(folder)
    assert [r.commit for r in records] == [base, c1, c2, c3]
    first_bad, fixed_in, summary = reproducer_dates("seg", records, classes)
    assert (first_bad, fixed_in) == ("before 00000000", "33333333")
    assert "reproduced on 2 of 3 recorded commits" in summary  # c1's other failure said nothing
    assert reproducer_dates("seg", records[:1], classes)[:2] == ("before 00000000", "open at 00000000")
    assert reproducer_dates("absent", records, classes) == ("", "", "")


def test_a_row_says_whether_the_machines_that_ran_its_reproducer_agree():
    """Below two machines nothing is said; the same verdict everywhere agrees; one machine apart disagrees."""
    def row(*seen: bool) -> BugRow:
        runs = {f"m{i}": {"reproduced": ok} for i, ok in enumerate(seen)}
        return BugRow("x", "load", "e", "Vulkan runtime", [], "", "", repro_runs=runs)

    assert (row().repro_agree, row(True).repro_agree) == (None, None)
    assert (row(True, True).repro_agree, row(False, False).repro_agree) == (True, True)
    assert row(True, True, False).repro_agree is False
    assert row(True, False).to_json()["repro_agree"] is False


def test_a_run_that_compared_no_outputs_cannot_tell_a_wrong_output():
    """A wrong-output reproducer run whose outputs were never compared with eager (``no error: ran``)
    neither agrees nor disagrees, and never dates the bug as fixed; a compared clean run does."""
    from vkbench.results.repro_runs import ReproRun

    uncompared = ReproRun(0, False, "error: wrong output", "no error: ran", 0.4)
    compared = ReproRun(0, False, "error: wrong output", "no error: ran, max abs diff 0", 0.4)
    wrong = ReproRun(0, True, "error: wrong output", "error: wrong output: max abs diff 3.18", 0.4)
    crash = ReproRun(-11, False, "error: load crashed", "no error: ran", 0.4)
    assert (uncompared.judged, compared.judged, wrong.judged, crash.judged) == (False, True, True, True)
    assert (uncompared.clean, compared.clean, crash.clean) == (False, True, False)

    def row(*runs: ReproRun) -> BugRow:
        seen = {f"m{i}": {"reproduced": run.reproduced, "judged": run.judged} for i, run in enumerate(runs)}
        return BugRow("x", "run", "e", "Vulkan runtime", [], "", "", repro_runs=seen)

    assert row(wrong, wrong, uncompared).repro_agree is True
    assert row(wrong, uncompared).repro_agree is None
    assert row(wrong, compared).repro_agree is False


def test_the_unets_garbage_is_seen_alike_where_outputs_were_compared(rows):
    """``run_unet_step_garbage``: lavapipe and the H100 compared outputs and both saw it; the H200
    record (10:23Z on 2026-12-06) predates that comparison, so it cannot tell and is not counted."""
    row = next(r for r in rows if r.id == "run_unet_step_garbage")
    judged = {machine: run["judged"] for machine, run in row.repro_runs.items()}
    assert judged == {"lavapipe-x86_64-2core-tracer-off": True, "nvidia-h100-tracer-off": True,
                      "nvidia-h200-tracer-off": False}
    assert row.repro_agree is True


def test_every_runtime_reproducer_was_seen_to_fail_on_a_vulkan_build(rows):
    """The runtime rows' check, recorded on a Vulkan build (CI has none): each reproduced there."""
    from vkbench.results import repro_runs

    records = [r for r in repro_runs.read_all() if r.build.get("vulkan_backend")]
    assert records, "no reproducer record from a Vulkan-enabled build in results/bugs/"
    for row in rows:
        if row.repro and repro_runs.needs_vulkan(ROOT / row.repro):
            seen = {m: run for m, run in row.repro_runs.items() if m in {r.machine for r in records}}
            assert seen and all(run["reproduced"] for run in seen.values()), (row.id, row.repro_runs)


def test_a_stored_error_line_names_every_load_failure(tmp_path):
    """The ladder's stored runtime line puts a stuck entry on the row whose pattern finds it, or on a
    row of its own; only an entry with no stored line is left "not recorded"."""
    from vkbench.results import sidecar
    from vkbench.results.model import Failure
    from vkbench.suite import catalogue

    entries = ["'x/conv'", "'x/odd'", "'x/silent'", "'x/fine'"]
    path = tmp_path / "releases" / "lavapipe-test" / "a9ed1dc2-existing-py3.12.json"
    path.parent.mkdir(parents=True)
    (path.parent / "machine.json").write_text('{"machine": "lavapipe-test", "version": 1}')
    path.write_text(json.dumps({
        "commit_hash": "a9ed1dc2" + "0" * 32, "env_name": "existing-py3.12", "date": 1, "version": 2,
        "result_columns": ["result", "params"],
        "results": {catalogue.VLA_LADDER.name: [[3.0, 3.0, 3.0, 0.0], [entries, ["'native'"]]]}}))
    ivec2 = ("Exception raised from make_ivec2 at ../backends/vulkan/runtime/utils/VecUtils.h:370: "
             "(ints.size() == 2) is false!")
    sidecar.merge(path, failures=[
        (catalogue.VLA_LADDER.name, ("x/conv", "native"), Failure("load", ivec2)),
        (catalogue.VLA_LADDER.name, ("x/odd", "native"), Failure("load", "Foo.cpp:1: something new"))])
    by_id = {row.id: row for row in bug_rows(tmp_path)}
    assert "x/conv" in by_id["load_make_ivec2"].entries  # another line number: the pattern still finds it
    assert by_id["load_make_ivec2"].error_lines["x/conv"] == {"lavapipe-test (native)": f"load: {ivec2}"}
    new = by_id["load_unclassified_1"]
    assert (new.entries, new.owner) == (["x/odd"], bugs.NOT_CLASSIFIED)
    assert new.error == "load: Foo.cpp:1: something new"
    assert by_id["load_unrecorded"].entries == ["x/silent"]


def test_a_program_that_runs_but_misses_eager_logs_its_distance(tmp_path, monkeypatch):
    """A finite output far from eager is a ladder point short of "matches": its line is its distance."""
    from vkbench.execution import record as execution_record
    from vkbench.execution.outcome import Outcome
    from vkbench.results import ladder
    from vkbench.results.run_log import LOG_SETTING, RunLog

    log = tmp_path / "failures.jsonl"
    monkeypatch.setenv(LOG_SETTING, str(log))
    ran = Outcome("probe/group_norm_3d", "vulkan", "native", ok=True, max_abs_diff=3.18, snr_db=0.0)
    nan = Outcome("probe/group_norm_3d", "vulkan", "python").fail("compare", "non-finite output")
    monkeypatch.setattr(execution_record, "unready", lambda *_: {})
    monkeypatch.setattr(execution_record, "measure_isolated", lambda *_: [ran, nan])
    execution_record.record(["probe/group_norm_3d"], ["vulkan"], ["native", "python"])
    logged = {key: (f.stage, f.error) for found in RunLog.read(log).failures.values()
              for key, f in found.items()}
    distance = "output not eager's: max abs diff 3.18, SNR 0.0 dB"
    assert logged == {("runtime", "probe/group_norm_3d|vulkan|native"): ("compare", distance),
                      ("runtime", "probe/group_norm_3d|vulkan|python"): ("compare", "non-finite output")}
    assert ladder.logged_outcomes([ran.to_json()]) == {
        ("runtime", "probe/group_norm_3d|vulkan|native"): ladder.Failure("compare", distance)}


def test_runtime_rows_are_dated_by_the_runtime_ladder_over_runtime_classes():
    """Ends: "before <range start>" / "open at <newest>"; a step between neighbouring classes: the
    class's first commit; between further commits: a range to bisect; no recorded commit: nothing."""
    from vkbench.commits.classes import Classes, CommitClass
    from vkbench.results.bug_rows import runtime_dates

    base, c1, c2, c3, c4 = ("0" * 40, "1" * 40, "2" * 40, "3" * 40, "4" * 40)
    classes = Classes("runtime", f"{base[:8]}..{c4[:8]}", [
        CommitClass(c1, "d1", "1.4.1", [c1]), CommitClass(c2, "d2", "1.4.1", [c2, c3]),
        CommitClass(c4, "d4", "1.5.1", [c4])])
    lava = "lavapipe (native)"
    stuck, runs = {lava: "lowered"}, {lava: "matches"}
    ends = runtime_dates("load", {base: stuck, c4: stuck}, classes)
    assert ends[:2] == ("before 00000000", "open at 44444444") and "2 of 2 recorded commits" in ends[2]
    assert runtime_dates("load", {c4: stuck}, classes)[:2] == ("at or before 44444444", "open at 44444444")
    assert runtime_dates("load", {c1: runs, c3: stuck, c4: runs}, classes)[:2] == ("22222222",  # its class
                                                                                    "44444444")
    assert runtime_dates("load", {base: runs, c4: stuck}, classes)[:2] == ("00000000..44444444 (bisect)",
                                                                          "open at 44444444")
    assert runtime_dates("load", {c4: {lava: "not lowered"}}, classes) == ("", "", "")  # says nothing
    assert runtime_dates("run", {c4: {lava: "runs"}}, classes)[1] == "open at 44444444"
    assert runtime_dates("load", {c4: stuck}, None) == ("", "", "")
