"""asv runs side by side (:mod:`vkbench.runs.lanes`): what must exist before two lanes start."""

from __future__ import annotations

import json
import os
from pathlib import Path

from git_repos import git

from vkbench.runs.lanes import ensure_clone


def test_the_project_clone_is_made_once_before_the_lanes(tmp_path: Path) -> None:
    """Two asv processes starting in one config folder both ``git clone --mirror`` the project into one
    path, and one fails (exit 128): the clone is made before they start, kept as it is after, and brought
    up to date before each set of lanes (which then run with ``--no-pull``)."""
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "f.txt").write_text("1\n")
    git(repo, "add", "f.txt")
    git(repo, "commit", "-q", "-m", "one")
    config = tmp_path / "asv.conf.json"
    config.write_text(json.dumps({"repo": str(repo), "project": "proj"}))
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    clone = ensure_clone(config, env)
    assert clone == (tmp_path / "proj").resolve()
    assert git(clone, "rev-parse", "--is-bare-repository") == "true"
    assert git(clone, "rev-parse", "main") == git(repo, "rev-parse", "HEAD")
    (clone / "kept").write_text("")
    assert ensure_clone(config, env) == clone and (clone / "kept").exists()  # an existing clone is asv's
    (repo / "f.txt").write_text("2\n")
    git(repo, "commit", "-q", "-am", "two")
    ensure_clone(config, env)  # fetched once here: the lanes' asv runs do not pull (--no-pull)
    assert git(clone, "rev-parse", "main") == git(repo, "rev-parse", "HEAD")
