"""The regression gate, end to end and offline: asv over a real (local) commit range.

A git repo is made in tmp from the installed ExecuTorch package's own Python
sources, laid out like the upstream tree (``vkbench.build.aot.source_tree_from_installed``),
with four commits:

* ``base``: the sources as installed;
* ``small``: every Vulkan support check makes one extra pass over the graph's
  nodes (how many compute nodes use this one?): about 3-4 % more partitioner
  work on ``Blocks(50)``, a few milliseconds of CPU time;
* ``drop``: ``aten.tanh`` removed from the Vulkan op registry, so the ``mish``
  probe leaves one more op on the CPU;
* ``slow``: ``VulkanPartitioner.partition`` re-validates every graph node for
  each tagged node (one extra pass over all nodes per node: O(nodes^2) calls
  of ``is_node_supported``).

asv builds each commit in ``aot`` mode (the commit's Python on the installed
release's wheel) in its own virtualenv and runs a trimmed grid of the real
suite (``Blocks(50)`` and the ``mish`` probe: an override appended
to a tmp copy of ``benchmarks/common.py``) on ``base``, ``small`` and ``drop``
(``slow`` is measured by its ``asv continuous`` only: its counted partition alone
would take a minute). Then:

* ``asv continuous -f 1.02 base small`` on the counted work (``PartitionWork``) exits 1
  and names the ``is_node_supported`` phase and the ``total``, not torch.fx's
  ``propose_partitions``; ``asv compare -f 1.4`` of the CPU-time track flags nothing: time cannot tell;
* ``asv continuous base slow`` exits 1 and names ``time_partition``;
* ``asv compare small drop`` shows ``track_cpu_ops('mish')`` rising (``+``);
* ``vkbench history confirm`` re-measures that step on both sides and stores it reproduced;
* ``asv continuous base base`` exits 0 (in the slow set);
* ``asv publish`` writes the site.

About 5-7 minutes on 2 cores; the env's pip requirements come from PyPI or
pip's cache and the base wheel from ``.asv/wheels`` (downloaded once).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("asv")
pytest.importorskip("executorch.backends.vulkan.partitioner.vulkan_partitioner")

from vkbench.build import aot  # noqa: E402

GRID_OVERRIDE = """

# --- regression-gate test: a trimmed grid of the same benchmarks ---
PROBE_NAMES = ["mish"]
BLOCK_SIZES = [50]
WORK_SIZES = [50]
"""

SMALL_ANCHOR = "        r = self._is_node_supported(node)\n"
SMALL_PATCH = """        # Count the compute nodes that use this one: one extra pass over the
        # graph's nodes in every support check.
        users = 0
        for other in node.graph.nodes:
            if other.op == "call_function" and node in other.users:
                users += 1
"""
SLOW_ANCHOR = "        pl = len(partition_list)\n"
SLOW_PATCH = """        # Re-validate every graph node for each tagged node, so that no tagged
        # node depends on support that changed while tagging: one extra pass
        # over all nodes per node, O(nodes^2) is_node_supported calls.
        support = capability_partitioner.operator_support
        for partition in partition_list:
            for _node in partition.nodes:
                for other in exported_program.graph_module.graph.nodes:
                    support.is_node_supported({}, other)

"""
DROP_LINE = "        exir_ops.edge.aten.tanh.default,\n"
BENCH = r"PartitionScaling\.time_partition|PartitionWork\.track_partition_events|ProbeCoverage\.track_cpu_ops"
WORK = r"PartitionWork\.track_partition_events"
MACHINE = "vkbench-gate"
#: The commits the fixture's ``asv run`` records (``slow`` only runs in its ``asv continuous``).
RECORDED = ("base", "small", "drop")


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "gate", "GIT_AUTHOR_EMAIL": "gate@vkbench.invalid",
           "GIT_COMMITTER_NAME": "gate", "GIT_COMMITTER_EMAIL": "gate@vkbench.invalid"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout.strip()


def _commit(repo: Path, message: str, date: str) -> str:
    _git(repo, "add", "-A")
    env_date = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    os.environ.update(env_date)
    try:
        _git(repo, "commit", "-q", "-m", message)
    finally:
        for key in env_date:
            os.environ.pop(key, None)
    return _git(repo, "rev-parse", "HEAD")


def make_fixture_repo(repo: Path) -> dict[str, str]:
    aot.source_tree_from_installed(repo)
    _git(repo, "init", "-q", "-b", "main")
    hashes = {"base": _commit(repo, "base: executorch sources as installed", "2026-01-01T00:00:00+0000")}
    partitioner = repo / "backends/vulkan/partitioner/vulkan_partitioner.py"
    text = partitioner.read_text()
    assert SMALL_ANCHOR in text, "is_node_supported() changed shape; update SMALL_ANCHOR"
    partitioner.write_text(text.replace(SMALL_ANCHOR, SMALL_PATCH + SMALL_ANCHOR, 1))
    hashes["small"] = _commit(repo, "small: one more pass over the nodes per support check",
                              "2026-01-01T12:00:00+0000")
    registry = repo / "backends/vulkan/op_registry.py"
    text = registry.read_text()
    assert DROP_LINE in text, "op registry changed shape; update DROP_LINE"
    registry.write_text(text.replace(DROP_LINE, "", 1))
    hashes["drop"] = _commit(repo, "drop: aten.tanh from the Vulkan op registry", "2026-01-02T00:00:00+0000")
    text = partitioner.read_text()
    assert SLOW_ANCHOR in text, "partition() changed shape; update SLOW_ANCHOR"
    partitioner.write_text(text.replace(SLOW_ANCHOR, SLOW_PATCH + SLOW_ANCHOR, 1))
    hashes["slow"] = _commit(repo, "slow: re-validate all nodes per tagged node", "2026-01-03T00:00:00+0000")
    for name, commit in hashes.items():
        _git(repo, "tag", name, commit)
    return hashes


def gate_config(tmp: Path, repo: Path) -> Path:
    from vkbench.build.hooks import derived_config

    config = derived_config()
    bench = tmp / "benchmarks"
    shutil.copytree(ROOT / "benchmarks", bench, ignore=shutil.ignore_patterns("__pycache__"))
    with (bench / "common.py").open("a") as handle:
        handle.write(GRID_OVERRIDE)
    config.update(
        repo=str(repo), branches=["main"], project="executorch-gate", benchmark_dir=str(bench),
        env_dir=str(tmp / "env"), results_dir=str(tmp / "results"), html_dir=str(tmp / "html"),
        show_commit_url="",
    )
    config.pop("project_url", None)
    path = tmp / "asv.conf.json"
    path.write_text(json.dumps(config, indent=2))
    return path


def asv(config: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    # asv's virtualenv finds "python3.12" on PATH; put the base interpreter's own
    # bin dir first so that version-manager shims (pyenv) are not in the way.
    path = f"{Path(sys.base_prefix) / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    # The aot smoke import (tests/test_build_aot.py covers it) is skipped here: the
    # suite's own import in asv is the same check, and it saves ~15 s per commit.
    # HOME in tmp: `asv machine` writes ~/.asv-machine.json, which is the user's, not the test's.
    env = {**os.environ, "VKBENCH_BASE_PYTHON": sys.executable, "PYTHONUNBUFFERED": "1", "PATH": path,
           "VKBENCH_AOT_SMOKE": "", "HOME": str(config.parent / "home")}
    command = [sys.executable, "-m", "asv", *args[:1], "--config", str(config), *args[1:]]
    start = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env, timeout=timeout,
                          check=False)
    print(f"$ asv {' '.join(args)}  -> exit {done.returncode} in {time.monotonic() - start:.0f}s\n"
          f"{done.stdout[-6000:]}\n{done.stderr[-3000:]}")
    return done


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("gate")
    repo = tmp / "executorch"
    hashes = make_fixture_repo(repo)
    config = gate_config(tmp, repo)
    assert asv(config, "machine", "--yes", "--machine", MACHINE).returncode == 0
    hashfile = tmp / "hashes.txt"
    recorded = {name: hashes[name] for name in RECORDED}
    hashfile.write_text("\n".join(recorded.values()) + "\n")
    run = asv(config, "run", "--machine", MACHINE, "--show-stderr", "-b", BENCH, f"HASHFILE:{hashfile}")
    return {"tmp": tmp, "repo": repo, "hashes": hashes, "recorded": recorded, "config": config, "run": run}


def _results(gate: dict, commit: str) -> dict:
    files = [p for p in (gate["tmp"] / "results" / MACHINE).glob(f"{commit[:8]}-*.json")]
    assert len(files) == 1, files
    return json.loads(files[0].read_text())


def _changed_rows(table: str, benchmark: str) -> list[list[str]]:
    """Rows of an asv compare/continuous table marked ``+`` (worse) for ``benchmark``."""
    rows = []
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and cells[0] == "+" and cells[-1].endswith(benchmark):
            rows.append(cells)
    return rows


def test_run_measures_every_commit(gate: dict) -> None:
    assert gate["run"].returncode == 0, gate["run"].stderr[-3000:]
    for name, commit in gate["recorded"].items():
        data = _results(gate, commit)
        value = data["results"]["bench_partition.PartitionScaling.time_partition"][0]
        assert value and value[0] and value[0] > 0, (name, value)
    files = [p.name for p in (gate["tmp"] / "results" / MACHINE).glob("*.json")]
    assert sum("VKBENCH_BUILDaot" in name for name in files) == 3, files  # the aot matrix env
    for name, commit in gate["recorded"].items():
        value = _results(gate, commit)["results"]["bench_partition.PartitionWork.track_partition_events"][0]
        assert all(count and count > 0 for count in value), (name, value)


def test_counted_work_flags_a_small_regression_time_cannot(gate: dict) -> None:
    """~3 % more partitioner work: the exact count flags it at -f 1.02 and names the phase."""
    base, small = (_results(gate, gate["hashes"][name])["results"] for name in ("base", "small"))
    work = "bench_partition.PartitionWork.track_partition_events"
    before, after = base[work][0], small[work][0]  # phases: propose, fusable, is_node_supported, total
    print("counted work base -> small:", before, after, f"total x{after[-1] / before[-1]:.4f}")
    assert before[0] == after[0], "torch.fx's propose_partitions did not change"
    assert 1.02 < after[-1] / before[-1] < 1.06
    done = asv(gate["config"], "continuous", "--machine", MACHINE, "-b", WORK, "-f", "1.02", "base", "small")
    assert done.returncode == 1, done.stdout[-3000:]
    flagged = {row[-1].split("(", 1)[1] for row in _changed_rows(done.stdout, ")")
               if "PartitionWork" in row[-1]}
    assert flagged == {"50, 'is_node_supported')", "50, 'total')"}, done.stdout[-3000:]
    timed = asv(gate["config"], "compare", "--machine", MACHINE, "-f", "1.4", "base", "small")  # recorded
    time_row = "PartitionScaling.time_partition(50)"
    assert timed.returncode == 0 and time_row in timed.stdout, timed.stdout[-3000:]
    assert not _changed_rows(timed.stdout, time_row), timed.stdout[-3000:]


def test_continuous_flags_the_slow_partitioner(gate: dict) -> None:
    done = asv(gate["config"], "continuous", "--machine", MACHINE, "-b", r"PartitionScaling\.time_partition",
               "-f", "1.4", "base", "slow")
    assert done.returncode == 1, done.stdout[-3000:]
    assert _changed_rows(done.stdout, "PartitionScaling.time_partition(50)"), done.stdout[-3000:]
    assert "PERFORMANCE DECREASED" in done.stdout


def test_compare_shows_more_cpu_ops_after_the_drop(gate: dict) -> None:
    hashes = gate["hashes"]
    done = asv(gate["config"], "compare", "--machine", MACHINE, "--only-changed",
               hashes["small"], hashes["drop"])
    assert done.returncode == 0
    rows = _changed_rows(done.stdout, "ProbeCoverage.track_cpu_ops('mish')")
    assert rows and rows[0][1:3] == ["1", "2"], done.stdout  # before, after
    base = _results(gate, hashes["base"])["results"]["bench_probes.ProbeCoverage.track_cpu_ops"][0]
    drop = _results(gate, hashes["drop"])["results"]["bench_probes.ProbeCoverage.track_cpu_ops"][0]
    assert drop[0] == base[0] + 1  # tanh joins log1p on the CPU


@pytest.mark.slow
def test_continuous_same_commit_passes(gate: dict) -> None:
    """In the slow set (80 s of CI): in CI, the unchanged phases that ``asv continuous -f 1.02 base small``
    leaves unflagged and the unflagged ``asv compare -f 1.4`` of the time track stand for it."""
    done = asv(gate["config"], "continuous", "--machine", MACHINE, "-b", r"PartitionScaling\.time_partition",
               "-f", "1.4", "base", "base")
    assert done.returncode == 0, done.stdout[-3000:]


def test_publish_builds_the_site(gate: dict) -> None:
    done = asv(gate["config"], "publish")
    assert done.returncode == 0
    html = gate["tmp"] / "html"
    assert (html / "index.html").exists()
    graphs = list((html / "graphs").rglob("bench_partition.PartitionScaling.time_partition.json"))
    assert graphs, sorted(p.name for p in html.iterdir())


def test_confirmation_measures_both_sides_again_and_stores_the_verdict(gate: dict) -> None:
    """``vkbench history confirm``'s run on the gate repo: the drop's ``mish`` step reproduces exactly."""
    from vkbench.results import confirmations
    from vkbench.results.asv_files import read_dir
    from vkbench.results.changes import changes
    from vkbench.runs.confirm import confirm

    results = gate["tmp"] / "results"
    stored = confirmations.path_for(results)
    table = changes(read_dir(results), None, confirmations.read(stored))
    steps = [step for step in table.steps_to_confirm()
             if step.key.benchmark.endswith("ProbeCoverage.track_cpu_ops") and step.key.param == "mish"]
    assert [(step.before, step.after) for step in steps] == [(1, 2)], table.steps_to_confirm()
    env = {"HOME": str(gate["tmp"] / "home"), "VKBENCH_AOT_SMOKE": "", "VKBENCH_BASE_PYTHON": sys.executable}
    done = confirm(results, gate["repo"], gate["config"], MACHINE, steps, env=env)
    assert [(c.measured_before, c.measured_after, c.reproduced) for c in done] == [(1, 2, True)]
    assert done[0].suite and done[0].suite.startswith("suite-") and done[0].machine == MACHINE
    again = changes(read_dir(results), None, confirmations.read(stored))
    row = next(c for c in again.changes
               if c.benchmark.endswith("ProbeCoverage.track_cpu_ops") and c.param == "mish")
    assert row.confirmed is True
    assert confirm(results, gate["repo"], gate["config"], MACHINE, steps, env=env) == []  # stored: not again
