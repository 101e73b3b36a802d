"""The Pages workflow: valid YAML, a job matrix fed by `vkbench shards`, every step's shell parses.

It cannot run here (no GitHub); each step's own command runs locally on a small shard instead.
"""

from __future__ import annotations

import json
import re
import shlex
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


def test_plan_step_lists_the_classes_no_recorded_commit_answers(workflow: dict, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan job's own command on a small repo: one commit per class, recorded classes left out."""
    from vkbench.build import index
    from vkbench.commits.fingerprint import Inputs

    script = next(run for job, run in _runs(workflow) if job == "plan" and "history classes" in run)
    assert "--unmeasured hashes.txt" in script
    repo = tmp_path / "et"
    repo.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "init", "-q"], check=True, env=env)
    hashes = []
    changes = [("version.txt", "1.5.0a0\n"), ("README", "x\n"), ("exir/a.py", "A = 2\n"), ("README", "y\n")]
    for i, (name, text) in enumerate(changes):
        if i == 0:
            layout = '[tool.setuptools.package-dir]\n"executorch.exir" = "exir"\n'
            (repo / "pyproject.toml").write_text(layout)
            (repo / "exir").mkdir()
            (repo / "exir" / "a.py").write_text("A = 1\n")
        (repo / name).write_text(text)
        subprocess.run([*git, "add", "-A"], check=True, env=env)
        subprocess.run([*git, "commit", "-qm", f"c{i}"], check=True, env=env)
        hashes.append(subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True,
                                     check=True).stdout.strip())
    inputs = Inputs("gate", ["executorch/exir/a.py"], [], "test", "2.11.0").write(tmp_path / "inputs.json")
    wheelhouse = tmp_path / "wheels"  # the release list aot reads (cached: no index request)
    monkeypatch.setenv("VKBENCH_WHEELHOUSE", str(wheelhouse))
    cache = index.releases_cache(wheelhouse)
    cache.parent.mkdir(parents=True)
    cache.write_text(json.dumps({"index": index.index_url(), "releases": ["1.4.1", "1.5.1"]}))
    results = tmp_path / "results"
    (results / "box").mkdir(parents=True)
    (results / "box" / "r.json").write_text(json.dumps({  # a recorded commit of the second class
        "commit_hash": hashes[3], "env_name": "e", "date": 1, "result_columns": ["result"], "results": {}}))
    done = subprocess.run([sys.executable, "-m", "vkbench", "history", "classes", "--mirror", str(repo),
                           "--inputs", str(inputs), "--out", str(tmp_path / "classes.json"),
                           "--results", str(results), "--unmeasured", str(tmp_path / "hashes.txt"), "HEAD"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "4 commits in 2 classes" in done.stdout
    assert (tmp_path / "hashes.txt").read_text().split() == [hashes[0]]  # class 2 answered by hashes[3]


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


def _commands(script: str) -> list[list[str]]:
    """The command lines of a step's script (comments and blank lines dropped)."""
    lines = (line.strip() for line in script.splitlines())
    return [shlex.split(line) for line in lines if line and not line.startswith("#")]


def test_publish_job_draws_release_tags_only(workflow: dict) -> None:
    """The hosted upstream site is published the way a first local publish is (``vkbench upstream
    --mirror M -- publish``, whose asv clone keeps release tags only: tests/test_upstream.py), never by
    plain ``asv publish``, whose fresh clone of GitHub on the runner would put every upstream tag on
    the graphs."""
    from vkbench.cli import build_parser

    script = next(run for job, run in _runs(workflow) if job == "publish" and "publish" in run)
    commands = _commands(script)
    assert not [c for c in commands if Path(c[0]).name == "asv"]
    upstream = next(i for i, c in enumerate(commands) if Path(c[0]).name == "vkbench" and c[1] == "upstream")
    args = build_parser().parse_args(commands[upstream][1:])
    assert [a for a in args.asv_args if a != "--"] == ["publish"]
    clone = next(i for i, c in enumerate(commands) if c[:2] == ["git", "clone"])
    assert clone < upstream and commands[clone][-2:] == ["https://github.com/pytorch/executorch.git",
                                                         str(args.mirror)]
    assert "--bare" in commands[clone]
    made = [c[1:] for c in commands if Path(c[0]).name == "vkbench"]
    assert made.index(["publish"]) < made.index(commands[upstream][1:]) < made.index(
        ["site", "make-offline", "html"])  # the releases, the upstream site, then the pages around them


def test_tier_pattern_step_prints_the_pattern() -> None:
    script = "from vkbench.suite.tiers import TIERS; print(TIERS['gate'])"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip().startswith("^bench_probes")
