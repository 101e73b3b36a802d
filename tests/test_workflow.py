"""The Pages workflow: valid YAML, a job matrix fed by `vkbench shards`, every step's shell parses.

It cannot run here (no GitHub); each step's own command runs locally on a small shard instead.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "asv.yml"


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _runs(workflow: dict) -> list[tuple[str, str]]:
    jobs = workflow["jobs"].items()
    return [(job, step["run"]) for job, spec in jobs for step in spec["steps"] if "run" in step]


def test_jobs_shard_benchmark_then_merge_and_deploy(workflow: dict) -> None:
    jobs = workflow["jobs"]
    assert jobs["benchmark"]["needs"] == "plan"
    assert jobs["benchmark"]["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
    assert set(jobs["publish"]["needs"]) == {"benchmark", "release"} and jobs["deploy"]["needs"] == "publish"
    assert all(spec.get("timeout-minutes", 0) <= 360 for spec in jobs.values())
    shard_step = next(run for job, run in _runs(workflow) if job == "benchmark" and "HASHFILE:" in run)
    assert "--skip-existing-commits" in shard_step and "HASHFILE:shard.txt" in shard_step


def test_every_step_is_valid_bash(workflow: dict) -> None:
    for job, script in _runs(workflow):
        plain = re.sub(r"\$\{\{[^}]*\}\}", "X", script)
        done = subprocess.run(["bash", "-n"], input=plain, capture_output=True, text=True)
        assert done.returncode == 0, (job, done.stderr)


def test_sampling_step_picks_evenly_spaced_commits_newest_included(workflow: dict, tmp_path: Path) -> None:
    script = next(run for job, run in _runs(workflow) if job == "plan" and "all.txt" in run)
    snippet = script.split("<<'PY'\n", 1)[1].split("\nPY", 1)[0]
    snippet = "\n".join(line[len("          "):] if line.startswith("          ") else line
                        for line in snippet.splitlines())
    (tmp_path / "all.txt").write_text("\n".join(f"c{i:03d}" for i in range(100)) + "\n")
    subprocess.run([sys.executable, "-c", snippet, "20"], cwd=tmp_path, check=True)
    picked = (tmp_path / "hashes.txt").read_text().split()
    assert len(picked) == 20 and picked[0] == "c000" and picked[-1] == "c099"


def test_shard_plan_on_a_small_shard(tmp_path: Path) -> None:
    """The plan job's own command: shards fit the budget, and the matrix is what the benchmark job reads."""
    hashes = tmp_path / "hashes.txt"
    hashes.write_text("".join(f"{i:040x}\n" for i in range(7)))
    shards_cmd = [sys.executable, "-m", "vkbench", "shards", "--hashes", str(hashes)]
    done = subprocess.run(
        [*shards_cmd, "--tier", "gate", "--budget", "45", "--results", str(ROOT / "results" / "releases"),
         "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    shards = [entry["hashes"].split() for entry in plan["matrix"]["include"]]
    assert sum(shards, []) == hashes.read_text().split()
    per_shard = plan["commits_per_shard"]
    assert all(len(s) <= per_shard for s in shards)
    assert 20 + per_shard * plan["minutes_per_commit"] * 1.5 <= 45
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == [f"shard-{i}.txt" for i in range(len(shards))]
    too_small = subprocess.run([*shards_cmd, "--budget", "21"], capture_output=True, text=True, timeout=120)
    assert too_small.returncode == 2 and "does not fit" in too_small.stderr


def test_tier_pattern_step_prints_the_pattern() -> None:
    script = "from vkbench.suite.tiers import TIERS; print(TIERS['gate'])"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip().startswith("^bench_probes")
