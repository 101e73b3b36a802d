"""``vkbench upstream``: git pointed at an incomplete local mirror through the environment only.

The fixture mirror is a small bare repo in tmp, incomplete the way a
firewalled mirror of ExecuTorch is: its ``.gitmodules`` names submodules no
one can fetch (under two names over its history), and one commit holds a
blob whose object was then deleted from the store (a "large blob" left out),
at a path that needs escaping in a sparse-checkout pattern.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vkbench import cli
from vkbench.runs import upstream_asv as upstream

URL = upstream.UPSTREAM_URLS[0]
LOST = "weights/#big [1].bin"  # the path whose blob the mirror lacks
IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@vkbench.invalid",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@vkbench.invalid"}


def _env(home: Path) -> dict[str, str]:
    """A git environment that reads and writes nothing of the user's (no ~/.gitconfig, no system file)."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**keep, **IDENTITY, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _git(cwd: Path, env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if check and done.returncode:
        raise AssertionError(f"git {' '.join(args)} -> {done.returncode}: {done.stderr}")
    return done


def _commit(work: Path, env: dict[str, str], message: str) -> str:
    _git(work, env, "add", "-A", "--", ".", ":!third-party")  # keep the gitlink, which has no work tree
    _git(work, env, "commit", "-q", "-m", message)
    return _git(work, env, "rev-parse", "HEAD").stdout.strip()


def _add_submodule_entry(work: Path, env: dict[str, str], name: str, path: str) -> None:
    """A ``.gitmodules`` section and a gitlink, as ``git submodule add`` leaves them (no fetch)."""
    (work / ".gitmodules").write_text(
        f'[submodule "{name}"]\n\tpath = {path}\n\turl = https://github.com/pytorch/unreachable-{name}.git\n')
    _git(work, env, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},{path}")


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("upstream")
    env = _env(tmp / "home")
    work = tmp / "work"
    work.mkdir()
    _git(work, env, "init", "-q", "-b", "main")
    (work / "version.txt").write_text("1.3.0\n")
    (work / "exir").mkdir()
    (work / "exir" / "__init__.py").write_text("A = 1\n")
    _add_submodule_entry(work, env, "old-name", "third-party/flatbuffers")
    first = _commit(work, env, "first: a submodule under its old name")
    lost = work / LOST
    lost.parent.mkdir()
    lost.write_bytes(b"a large blob the mirror will not have\n" * 100)
    (work / ".gitmodules").write_text((work / ".gitmodules").read_text().replace("old-name", "flatbuffers"))
    with_blob = _commit(work, env, "second: the large blob; the submodule renamed")
    (work / "exir" / "__init__.py").write_text("A = 2\n")
    head = _commit(work, env, "third: Python only")
    blob = _git(work, env, "rev-parse", f"{with_blob}:{LOST}").stdout.strip()
    bare = tmp / "executorch.git"
    _git(tmp, env, "clone", "-q", "--bare", str(work), str(bare))
    loose = bare / "objects" / blob[:2] / blob[2:]
    assert loose.is_file(), "the fixture expects loose objects (no pack)"
    loose.unlink()
    assert _git(tmp, env, "--git-dir", str(bare), "cat-file", "-e", blob, check=False).returncode
    return {"tmp": tmp, "env": env, "bare": bare, "blob": blob,
            "commits": {"first": first, "with_blob": with_blob, "head": head}}


def test_mirror_facts_find_submodules_and_missing_paths(mirror: dict, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    facts = upstream.mirror_facts(mirror["bare"], tmp_path)
    assert facts.submodules == ["flatbuffers", "old-name"]  # every name in history, not only HEAD's
    assert facts.missing == {mirror["blob"]: [LOST]}
    assert facts.missing_paths == [LOST]
    cached = list(tmp_path.glob("mirror-*.json"))
    assert len(cached) == 1 and json.loads(cached[0].read_text())["refs"] == facts.refs

    def never(*args: object) -> set[str]:
        raise AssertionError("the cache should have answered")

    monkeypatch.setattr(upstream, "missing_objects", never)
    assert upstream.mirror_facts(mirror["bare"], tmp_path) == facts


def test_cache_follows_the_mirrors_refs(mirror: dict, tmp_path: Path) -> None:
    clone = tmp_path / "clone.git"
    _git(tmp_path, mirror["env"], "clone", "-q", "--mirror", str(mirror["bare"]), str(clone))
    before = upstream.mirror_facts(clone, tmp_path / "state")
    _git(tmp_path, mirror["env"], "--git-dir", str(clone), "tag", "v1.3.0", mirror["commits"]["first"])
    after = upstream.mirror_facts(clone, tmp_path / "state")
    assert after.refs != before.refs and after.missing == before.missing


def test_git_works_through_the_environment_only(mirror: dict, tmp_path: Path) -> None:
    """Clone upstream's URL, check out the commit with the lost blob, update submodules."""
    base = _env(tmp_path / "home")
    plain = _git(tmp_path, base, "clone", "-q", str(mirror["bare"]), str(tmp_path / "control"), check=False)
    assert plain.returncode != 0  # without the settings, checking out HEAD needs the lost blob

    env = upstream.prepare(mirror["bare"], tmp_path / "state", env=base)
    work = tmp_path / "executorch"
    _git(tmp_path, env, "clone", "-q", URL, str(work))
    _git(work, env, "checkout", "-q", mirror["commits"]["with_blob"])
    update = _git(work, env, "submodule", "update", "--init", "--recursive")
    assert "Skipping submodule" in update.stdout + update.stderr
    assert (work / "exir" / "__init__.py").read_text() == "A = 1\n"
    assert not (work / LOST).exists()
    # still tracked, only not in the work tree (skip-worktree: "S"); git sees nothing changed
    assert _git(work, env, "ls-files", "-v", "-z", "--", LOST).stdout == f"S {LOST}\0"
    assert _git(work, env, "status", "--porcelain").stdout == ""
    assert not any((work / "third-party" / "flatbuffers").iterdir())
    assert _git(work, env, "config", "remote.origin.url").stdout.strip() == URL  # stored: upstream's
    _git(work, env, "checkout", "-q", mirror["commits"]["head"])
    assert (work / "exir" / "__init__.py").read_text() == "A = 2\n"


def test_asv_checks_commits_out_of_the_mirror(mirror: dict, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """asv's own git calls (clone --mirror, clone --shared --recursive, checkout, submodules)."""
    pytest.importorskip("asv")
    from asv.plugins.git import Git

    env = upstream.prepare(mirror["bare"], tmp_path / "state", env=_env(tmp_path / "home"))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    repo = Git(URL, str(tmp_path / "asv-mirror"))
    assert repo.get_hash_from_name("main") == mirror["commits"]["head"]
    build = tmp_path / "project"
    repo.checkout(str(build), mirror["commits"]["with_blob"])
    assert (build / "version.txt").is_file() and not (build / LOST).exists()
    repo.checkout(str(build), mirror["commits"]["head"])  # asv reuses the build dir
    assert (build / "exir" / "__init__.py").read_text() == "A = 2\n"


def test_environment_builder_is_pure() -> None:
    settings = upstream.git_settings(Path("/m/executorch.git"), ["b", "a", "b"], Path("/t"))
    assert settings == [
        ("url./m/executorch.git.insteadOf", "https://github.com/pytorch/executorch.git"),
        ("url./m/executorch.git.insteadOf", "https://github.com/pytorch/executorch"),
        ("submodule.a.update", "none"), ("submodule.b.update", "none"),
        ("core.sparseCheckout", "true"), ("core.sparseCheckoutCone", "false"),
        ("init.templateDir", "/t"),
    ]
    before = {"PATH": "/usr/bin", "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name",
              "GIT_CONFIG_VALUE_0": "me"}
    env = upstream.upstream_env(before, settings, python="/venv/bin/python", base_prefix="/opt/py")
    assert env["GIT_CONFIG_COUNT"] == str(1 + len(settings))
    assert (env["GIT_CONFIG_KEY_0"], env["GIT_CONFIG_VALUE_0"]) == ("user.name", "me")  # kept first
    assert [(env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"]) for i in range(1, 8)] == settings
    assert env["PATH"] == "/opt/py/bin:/usr/bin"
    assert env["VKBENCH_BASE_PYTHON"] == "/venv/bin/python" and env["GIT_TERMINAL_PROMPT"] == "0"
    assert before["GIT_CONFIG_COUNT"] == "1"  # not modified in place


def test_sparse_patterns_escape_and_keep_everything_else(tmp_path: Path) -> None:
    assert upstream.sparse_pattern("a/b.gif") == "/a/b.gif"
    assert upstream.sparse_pattern("w/#x [1]*?.bin") == "/w/\\#x \\[1\\]\\*\\?.bin"
    assert upstream.sparse_pattern("!odd ") == "/\\!odd\\ "
    template = upstream.write_template(tmp_path / "t", ["z.a", "a/b.gif", "z.a"])
    assert (template / "info" / "sparse-checkout").read_text() == "/*\n!/a/b.gif\n!/z.a\n"


def test_asv_command_passes_through_and_adds_the_machine(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    head = [sys.executable, "-m", "asv"]
    assert upstream.asv_command(config, ["--", "run", "-b", "Probe", "HASHFILE:h"], "m1") == [
        *head, "run", "--config", str(config), "--machine", "m1", "-b", "Probe", "HASHFILE:h"]
    assert upstream.asv_command(config, ["continuous", "-m", "m2", "a", "b"], "m1") == [
        *head, "continuous", "--config", str(config), "-m", "m2", "a", "b"]
    assert upstream.asv_command(config, ["publish"], "m1") == [*head, "publish", "--config", str(config)]
    with pytest.raises(upstream.UpstreamError, match="no asv subcommand"):
        upstream.asv_command(config, ["--"], "m1")


def test_derived_config_keeps_upstreams_repo(tmp_path: Path) -> None:
    config = json.loads(upstream.write_config(tmp_path / "c.json").read_text())
    assert config["repo"] == URL
    assert config["results_dir"] == str(upstream.ROOT / "results" / "upstream")
    assert "{conf_dir}" not in json.dumps(config)


def test_cli_registers_and_explains_itself(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["upstream", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "--mirror" in text and "GIT_CONFIG" in text and "results/upstream/<machine>/" in text
    code = cli.main(["upstream", "--mirror", str(tmp_path), "--state-dir", str(tmp_path / "s"),
                     "--config-out", str(tmp_path / "c.json"), "--", "run"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [f"vkbench upstream: error: {tmp_path} is not a git repository "
                                 "(git rev-parse --absolute-git-dir failed)"]
    assert not (tmp_path / "c.json").exists()


def test_a_failing_git_command_is_one_line(mirror: dict, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """vkbench.git: the command, where it ran and git's last stderr line; ``check=False`` answers nothing."""
    from vkbench import git

    with pytest.raises(git.GitError) as raised:
        git.run(["rev-list", "no-such-rev"], git_dir=mirror["bare"])
    message = str(raised.value)
    assert message.startswith(f"git rev-list no-such-rev in {mirror['bare']} failed: ")
    assert "no-such-rev" in message.split("failed: ")[1] and "\n" not in message
    assert git.text(["rev-parse", "HEAD"], cwd=tmp_path, check=False) == ""
    assert git.text(["rev-parse", "main"], git_dir=mirror["bare"]) == mirror["commits"]["head"]
    long = ["tag", "-d", *(f"ciflow/trunk/{i}" for i in range(100))]
    with pytest.raises(git.GitError, match=r"^git tag -d ciflow/trunk/0 .* \.\.\. in .* failed: "):
        git.run(long, git_dir=mirror["bare"])
    # a mirror git cannot walk (a branch at an object it lacks): one usage line, not a traceback
    broken = tmp_path / "broken.git"
    _git(tmp_path, mirror["env"], "init", "-q", "--bare", str(broken))
    (broken / "refs" / "heads" / "main").write_text("a" * 40 + "\n")
    code = cli.main(["upstream", "--mirror", str(broken), "--state-dir", str(tmp_path / "s"),
                     "--config-out", str(tmp_path / "c.json"), "--", "run"])
    assert code == 2 and capsys.readouterr().err.strip().splitlines() == [
        f"vkbench upstream: error: git rev-list --objects --missing=print --all in {broken} failed: "
        "fatal: bad object refs/heads/main"]


def test_tier_adds_its_bench_pattern(tmp_path):
    from vkbench.runs.upstream_asv import asv_command
    from vkbench.suite.tiers import TIERS

    command = asv_command(tmp_path / "c.json", ["--", "run", "HASHFILE:h.txt"], "box", "gate")
    assert command[command.index("-b") + 1] == TIERS["gate"] and command[-1] == "HASHFILE:h.txt"


def _tagged_repo(tmp_path: Path, env: dict[str, str]) -> tuple[Path, list[str]]:
    """Two commits on main, tagged the way upstream is: releases, an -rc, ciflow/*, a nightly."""
    work = tmp_path / "work"
    work.mkdir()
    _git(work, env, "init", "-q", "-b", "main")
    commits = []
    for version, tags in (("1.4.0", ("v1.4.0", "v1.4.0-rc1", "ciflow/trunk/123")),
                          ("1.5.0", ("v1.5.0", "nightly"))):
        (work / "version.txt").write_text(version + "\n")
        commits.append(_commit(work, env, version))
        for tag in tags:
            _git(work, env, "tag", tag)
    return work, commits


def test_publish_sees_only_release_tags(tmp_path: Path) -> None:
    """asv's clone keeps every mirror tag (ciflow/*, -rc): before publish only releases stay."""
    env = _env(tmp_path / "home")
    work, _ = _tagged_repo(tmp_path, env)
    clone = tmp_path / "project"
    _git(tmp_path, env, "clone", "-q", "--mirror", str(work), str(clone))
    dropped = upstream.release_tags_only(clone, env)
    assert sorted(dropped) == ["ciflow/trunk/123", "nightly", "v1.4.0-rc1"]
    assert _git(clone, env, "tag", "-l").stdout.split() == ["v1.4.0", "v1.5.0"]
    assert upstream.release_tag(clone, "v1.5.0") in ("v1.4.0", "v1.5.0")
    # no clone yet (a fresh machine): made the way asv makes it, then pruned the same way
    fresh = tmp_path / "fresh"
    assert sorted(upstream.release_tags_only(fresh, env, str(work))) == sorted(dropped)
    assert _git(fresh, env, "tag", "-l").stdout.split() == ["v1.4.0", "v1.5.0"]
    assert _git(fresh, env, "config", "remote.origin.mirror").stdout.strip() == "true"


def _asv_results(results: Path, commits: list[str]) -> None:
    """The smallest results asv publish draws: one track benchmark measured at each commit."""
    (results / "box").mkdir(parents=True)
    (results / "box" / "machine.json").write_text(json.dumps({"machine": "box", "version": 1}))
    name = "bench_x.X.track_x"
    (results / "benchmarks.json").write_text(json.dumps({"version": 2, name: {
        "name": name, "type": "track", "unit": "unit", "param_names": [], "params": [], "version": "1",
        "code": "", "timeout": 60}}))
    for i, commit in enumerate(commits):
        (results / "box" / f"{commit[:8]}-e.json").write_text(json.dumps({
            "commit_hash": commit, "env_name": "e", "date": 1_700_000_000_000 + i, "version": 2,
            "params": {"machine": "box"}, "python": "3.12", "requirements": {}, "env_vars": {},
            "durations": {},
            "result_columns": ["result", "params", "version"], "results": {name: [[1.0 + i], [], "1"]}}))


def test_first_publish_on_a_fresh_machine_draws_release_tags_only(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """No asv clone and no state yet: ``vkbench upstream -- publish`` puts release tags only on the graphs.

    asv would clone the mirror itself, with every tag; the clone is made and pruned before asv runs.
    """
    pytest.importorskip("asv")
    from vkbench.build.hooks import derived_config

    env = _env(tmp_path / "home")
    for key in [k for k in os.environ if k.startswith("GIT_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    work, commits = _tagged_repo(tmp_path, env)
    mirror = tmp_path / "executorch.git"
    _git(tmp_path, env, "clone", "-q", "--bare", str(work), str(mirror))
    _asv_results(tmp_path / "results", commits)
    html = tmp_path / "html"

    def write_config(path: Path) -> Path:  # the real derived config, with results and site in tmp
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(derived_config(results_dir=str(tmp_path / "results"), html_dir=str(html))))
        return path

    monkeypatch.setattr(upstream, "write_config", write_config)
    config = tmp_path / "asv" / "upstream.conf.json"
    code = cli.main(["upstream", "--mirror", str(mirror), "--state-dir", str(tmp_path / "state"),
                     "--config-out", str(config), "--", "publish"])
    assert code == 0
    assert sorted(json.loads((html / "index.json").read_text())["tags"]) == ["v1.4.0", "v1.5.0"]
    clone = tmp_path / "asv" / "executorch"  # asv's clone, beside the config: made before asv ran
    assert _git(tmp_path, env, "--git-dir", str(clone), "tag", "-l").stdout.split() == ["v1.4.0", "v1.5.0"]


def test_a_recording_registers_an_unknown_machine_once(tmp_path):
    """``asv run`` refuses an unknown machine without a tty: every recording command registers it first,
    in the ``HOME`` it is given (here tmp, never the user's ``~/.asv-machine.json``)."""
    from vkbench.paths import ROOT
    from vkbench.runs import asv_machine

    env = {**os.environ, "HOME": str(tmp_path)}
    assert not asv_machine.known("vkbench-test-machine", env)
    asv_machine.ensure(ROOT / "asv.conf.json", "vkbench-test-machine", env)
    assert asv_machine.known("vkbench-test-machine", env)
    written = (tmp_path / ".asv-machine.json").read_text()
    asv_machine.ensure(ROOT / "asv.conf.json", "vkbench-test-machine", env)  # known: nothing rewritten
    assert (tmp_path / ".asv-machine.json").read_text() == written
    (tmp_path / ".asv-machine.json").write_text("{not json")
    assert not asv_machine.known("vkbench-test-machine", env)  # an unreadable file describes nothing



def test_each_asv_process_rewrites_a_machine_file_of_its_own(tmp_path):
    """``asv run`` rewrites ``~/.asv-machine.json`` at its start (emptying it first), so an asv process
    started beside it could read an empty file and stop (a gate lane did, in CI): every asv process vkbench
    starts gets a home of its own. Real asv's ``Machine.load`` (what ``asv run`` calls) in two such homes at
    once: each rewrites its copy, the real file is never written, the other entries of the home are there."""
    from vkbench.paths import ROOT
    from vkbench.runs import asv_machine

    (tmp_path / ".cache").mkdir()
    env = {**os.environ, "HOME": str(tmp_path)}
    asv_machine.ensure(ROOT / "asv.conf.json", "vkbench-test-machine", env)
    real = tmp_path / ".asv-machine.json"
    before = (real.read_bytes(), real.stat().st_mtime_ns)
    load = ("import asv.machine as m, pathlib, sys; m.Machine.load(machine_name='vkbench-test-machine'); "
            "print(pathlib.Path.home())")
    with asv_machine.own_home(env) as first, asv_machine.own_home(env) as second:
        homes = [Path(first["HOME"]), Path(second["HOME"])]
        running = [subprocess.Popen([sys.executable, "-c", load], env=e, stdout=subprocess.PIPE, text=True)
                   for e in (first, second)]
        printed = [process.communicate()[0].strip() for process in running]
        assert [process.returncode for process in running] == [0, 0]
        assert printed == [str(home) for home in homes] and homes[0] != homes[1]
        for home in homes:
            assert "vkbench-test-machine" in json.loads((home / ".asv-machine.json").read_text())
            assert (home / ".cache").resolve() == tmp_path / ".cache"
    assert (real.read_bytes(), real.stat().st_mtime_ns) == before
    assert not any(home.exists() for home in homes)

def test_a_runs_provenance_takes_the_command_lines_launch_method_over_the_configs():
    """``vkbench runtime record`` runs asv with ``--launch-method spawn`` (the config says forkserver): its
    files say spawn; a run without the option says the config's."""
    from vkbench.build.hooks import derived_config
    from vkbench.runs.provenance import run_provenance

    spawned = run_provenance(["run", "-b", "^x", "--launch-method", "spawn"], "runtime")
    assert (spawned.tier, spawned.bench_pattern, spawned.launch_method) == ("runtime", "^x", "spawn")
    assert run_provenance(["run", "--bench=^y", "--launch-method=spawn"], None).launch_method == "spawn"
    default = run_provenance(["run", "-b", "^x"], "gate")
    assert default.launch_method == derived_config()["launch_method"] == "forkserver"
