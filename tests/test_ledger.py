"""The offline release ledger: deterministic hashes, date order, re-keyed results."""

from __future__ import annotations

import json
import subprocess

import pytest

from vkbench.results.locks import LOCK_NAME
from vkbench.runs import ledger


@pytest.fixture
def ledger_paths(tmp_path, monkeypatch):
    monkeypatch.setattr(ledger, "LEDGER_REPO", tmp_path / "ledger")
    monkeypatch.setattr(ledger, "RESULTS_DIR", tmp_path / "results" / "releases")
    monkeypatch.setattr(ledger, "MANIFEST", tmp_path / "results" / "ledger.json")
    return tmp_path


def _log(repo) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%H %cI %s", "main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.strip().splitlines()


def test_ledger_is_deterministic_and_date_ordered(ledger_paths, tmp_path):
    newer = ledger.Release("1.5.1+cpu", "3b60683923245cf472b7323426920e15623ba361", "2026-09-22T17:40:44Z")
    older = ledger.Release("1.4.1", "aaaa", "2026-06-01T00:00:00Z")
    first = ledger.rebuild_ledger([newer])[0].commit
    # Rebuilding from scratch elsewhere yields the same hash (a clean clone reproduces it).
    ledger.LEDGER_REPO = tmp_path / "again"
    assert (
        ledger.rebuild_ledger([ledger.Release(newer.version, newer.git_version, newer.date)])[0].commit
        == first
    )
    ordered = ledger.rebuild_ledger([newer, older])
    assert [r.version for r in ordered] == ["1.4.1", "1.5.1+cpu"]
    log = _log(ledger.LEDGER_REPO)
    assert log[0].startswith(ordered[1].commit) and "2026-09-22T17:40:44" in log[0]
    assert "executorch 1.5.1+cpu (upstream 3b60683923245cf472b7323426920e15623ba361)" in log[0]
    assert ordered[1].commit != first  # re-chained behind the older release


def test_results_are_rekeyed_when_an_older_release_is_inserted(ledger_paths):
    machine = ledger.RESULTS_DIR / "m"
    machine.mkdir(parents=True)
    old, new = "1" * 40, "2" * 40
    asv_file = {"commit_hash": old, "result_columns": ["result"], "results": {}}
    (machine / f"{old[:8]}-existing-py.json").write_text(json.dumps(asv_file))
    (machine / "machine.json").write_text("{}")
    ledger.rekey_results({old: new})
    moved = machine / f"{new[:8]}-existing-py.json"
    assert moved.exists() and json.loads(moved.read_text())["commit_hash"] == new
    assert not (machine / f"{old[:8]}-existing-py.json").exists()


def test_installed_release_is_recorded_once(ledger_paths, monkeypatch):
    monkeypatch.setattr(ledger, "release_date", lambda version: "2026-09-22T17:40:44Z")
    first = ledger.ensure_installed_release()
    again = ledger.ensure_installed_release()
    assert first.commit == again.commit
    manifest = json.loads(ledger.MANIFEST.read_text())["releases"]
    assert len(manifest) == 1 and manifest[0]["version"].startswith("1.5.1")


def test_derived_config_points_at_the_ledger(ledger_paths, monkeypatch):
    monkeypatch.setattr(ledger, "LEDGER_CONFIG", ledger_paths / "releases.conf.json")
    config = json.loads(ledger.write_ledger_config().read_text())
    assert config["repo"] == str(ledger.LEDGER_REPO)
    assert config["results_dir"] == str(ledger.RESULTS_DIR)
    assert config["html_dir"].endswith("html/releases")
    assert "build_command" not in config


def test_results_are_filed_under_a_path_independent_environment(ledger_paths):
    machine = ledger.RESULTS_DIR / "m"
    machine.mkdir(parents=True)
    commit = "3" * 40
    first = {"commit_hash": commit, "env_name": "existing-py_a_bin_python", "date": 1,
             "params": {"machine": "m", "python": "/a/bin/python"}, "python": "/a/bin/python",
             "result_columns": ["result"], "results": {"b.track_x": [[1]]}, "durations": {}}
    (machine / f"{commit[:8]}-existing-py_a_bin_python.json").write_text(json.dumps(first))
    target = ledger.normalize_results(commit, "m")
    second = dict(first, env_name="existing-py_b_bin_python", results={"b.track_y": [[2]]}, date=2)
    (machine / f"{commit[:8]}-existing-py_b_bin_python.json").write_text(json.dumps(second))
    assert ledger.normalize_results(commit, "m") == target
    data = json.loads(target.read_text())
    assert [p.name for p in machine.iterdir() if p.name != LOCK_NAME] == [target.name]
    assert data["params"]["python"] == data["python"] == target.name.split("-py")[1][:-5]
    assert set(data["results"]) == {"b.track_x", "b.track_y"}  # -b subsets accumulate
