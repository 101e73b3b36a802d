"""The regression gate's fixture: a real (local) ExecuTorch commit range and asv over it, offline.

A git repo is made in tmp from the installed ExecuTorch package's own Python
sources, laid out like the upstream tree (``vkbench.build.aot.source_tree_from_installed``),
with four commits on main and one beside it:

* ``base``: the sources as installed;
* ``small``: every Vulkan support check makes one extra pass over the graph's
  nodes (how many compute nodes use this one?): about 3-4 % more partitioner
  work on ``Blocks(50)``, a few milliseconds of CPU time;
* ``drop``: ``aten.tanh`` removed from the Vulkan op registry, so the ``mish``
  probe leaves one more op on the CPU;
* ``slow``: ``VulkanPartitioner.partition`` re-validates every graph node for
  each tagged node (one extra pass over all nodes per node: O(nodes^2) calls
  of ``is_node_supported``);
* ``comment`` (off ``base``): a comment added to the partitioner, nothing else.

asv builds each commit in ``aot`` mode (the commit's Python on the installed
release's wheel) in its own virtualenv and runs a trimmed grid of the real
suite (``Blocks(20)`` and ``Blocks(50)``, and the ``mish`` probe: an override appended to a tmp copy
of ``benchmarks/common.py``; CI's ``vkbench gate`` runs compare the 20-block counts, the slow set
the 50-block ones). Two test files use it, one per xdist worker:
``test_regression_gate.py`` (``asv run``, ``compare``, ``publish``, the confirmation)
and ``test_regression_gate_continuous.py`` (``asv continuous`` and the ``slow`` commit). The env's pip
requirements come from PyPI or pip's cache and the base wheel from ``.asv/wheels``
(downloaded once).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from git_repos import git

from vkbench.build import aot

ROOT = Path(__file__).resolve().parent.parent

GRID_OVERRIDE = """

# --- regression-gate test: a trimmed grid of the same benchmarks ---
PROBE_NAMES = ["mish"]
BLOCK_SIZES = [20, 50]
WORK_SIZES = [20, 50]
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
COMMENT = "        # Ask the op registry whether this node can run on Vulkan.\n"
DROP_LINE = "        exir_ops.edge.aten.tanh.default,\n"
WORK = r"PartitionWork\.track_partition_events"
TIME = r"PartitionScaling\.time_partition"
MACHINE = "vkbench-gate"


def git_commit(repo: Path, message: str, date: str) -> str:
    git(repo, "add", "-A")
    env_date = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    os.environ.update(env_date)
    try:
        git(repo, "commit", "-q", "-m", message)
    finally:
        for key in env_date:
            os.environ.pop(key, None)
    return git(repo, "rev-parse", "HEAD")


def make_fixture_repo(repo: Path) -> dict[str, str]:
    aot.source_tree_from_installed(repo)
    git(repo, "init", "-q", "-b", "main")
    hashes = {"base": git_commit(repo, "base: executorch sources as installed", "2026-01-01T00:00:00+0000")}
    partitioner = repo / "backends/vulkan/partitioner/vulkan_partitioner.py"
    text = partitioner.read_text()
    assert SMALL_ANCHOR in text, "is_node_supported() changed shape; update SMALL_ANCHOR"
    partitioner.write_text(text.replace(SMALL_ANCHOR, SMALL_PATCH + SMALL_ANCHOR, 1))
    hashes["small"] = git_commit(repo, "small: one more pass over the nodes per support check",
                              "2026-01-01T12:00:00+0000")
    registry = repo / "backends/vulkan/op_registry.py"
    text = registry.read_text()
    assert DROP_LINE in text, "op registry changed shape; update DROP_LINE"
    registry.write_text(text.replace(DROP_LINE, "", 1))
    hashes["drop"] = git_commit(repo, "drop: aten.tanh from the Vulkan op registry",
                                "2026-01-02T00:00:00+0000")
    text = partitioner.read_text()
    assert SLOW_ANCHOR in text, "partition() changed shape; update SLOW_ANCHOR"
    partitioner.write_text(text.replace(SLOW_ANCHOR, SLOW_PATCH + SLOW_ANCHOR, 1))
    hashes["slow"] = git_commit(repo, "slow: re-validate all nodes per tagged node",
                                "2026-01-03T00:00:00+0000")
    # comment: off base, on a side branch: only a comment added to the partitioner (an innocent commit)
    git(repo, "checkout", "-q", "-b", "comment-side", hashes["base"])
    text = partitioner.read_text()
    partitioner.write_text(text.replace(SMALL_ANCHOR, COMMENT + SMALL_ANCHOR, 1))
    hashes["comment"] = git_commit(repo, "comment: a comment in the partitioner", "2026-01-01T06:00:00+0000")
    git(repo, "checkout", "-q", "main")
    for name, commit in hashes.items():
        git(repo, "tag", name, commit)
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


def asv_env(config: Path) -> dict[str, str]:
    """The environment asv (and ``vkbench gate``) runs the fixture in."""
    # asv's virtualenv finds "python3.12" on PATH; put the base interpreter's own
    # bin dir first so that version-manager shims (pyenv) are not in the way.
    path = f"{Path(sys.base_prefix) / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    # The aot smoke import (tests/test_build_aot.py covers it) is skipped here: the
    # suite's own import in asv is the same check, and it saves ~15 s per commit.
    # HOME in tmp: `asv machine` writes ~/.asv-machine.json, which is the user's, not the test's.
    return {**os.environ, "VKBENCH_BASE_PYTHON": sys.executable, "PYTHONUNBUFFERED": "1", "PATH": path,
            "VKBENCH_AOT_SMOKE": "", "HOME": str(config.parent / "home")}


def asv(config: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = asv_env(config)
    command = [sys.executable, "-m", "asv", *args[:1], "--config", str(config), *args[1:]]
    start = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env, timeout=timeout,
                          check=False)
    print(f"$ asv {' '.join(args)}  -> exit {done.returncode} in {time.monotonic() - start:.0f}s\n"
          f"{done.stdout[-6000:]}\n{done.stderr[-3000:]}")
    return done


def new_gate(tmp: Path) -> dict:
    """The four-commit repo, its asv config and machine in ``tmp``; nothing measured yet."""
    repo = tmp / "executorch"
    hashes = make_fixture_repo(repo)
    config = gate_config(tmp, repo)
    assert asv(config, "machine", "--yes", "--machine", MACHINE).returncode == 0
    return {"tmp": tmp, "repo": repo, "hashes": hashes, "config": config}


def results(gate: dict, commit: str) -> dict:
    """The asv result file of ``commit`` on the gate's machine, as JSON."""
    files = [p for p in (gate["tmp"] / "results" / MACHINE).glob(f"{commit[:8]}-*.json")]
    assert len(files) == 1, files
    return json.loads(files[0].read_text())


def changed_rows(table: str, benchmark: str) -> list[list[str]]:
    """Rows of an asv compare/continuous table marked ``+`` (worse) for ``benchmark``."""
    rows = []
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and cells[0] == "+" and cells[-1].endswith(benchmark):
            rows.append(cells)
    return rows
