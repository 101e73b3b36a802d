"""Record asv results for the *installed* ExecuTorch release, offline.

asv files every result under a commit of ``repo`` and needs that commit
(and its date) at run and publish time. The installed wheel came from an
upstream commit we cannot reach (no GitHub here), so we keep a *ledger*: a
tiny local git repo with one commit per recorded release, dated at the
release's upload to PyPI, whose message names the version and the upstream
``git_version``. The list of releases lives in ``results/ledger.json``
(committed), and the ledger repo is rebuilt from it deterministically (fixed
author, dates and content), so a clean clone reproduces the same hashes.
Commits are chained in release-date order; when an older release is
recorded later, later hashes change and the stored results are re-keyed.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
import sys
from pathlib import Path

from vkbench import git, settings
from vkbench.core.versions import executorch_identity, public_version
from vkbench.paths import ROOT
from vkbench.results import locks, sidecar
from vkbench.results.asv_files import read_file, result_paths, without_unreadable, write_file
from vkbench.results.ledger_file import Release, manifest_path, read_ledger, write_ledger
from vkbench.results.recording import recording
from vkbench.runs import asv_machine
from vkbench.runs.provenance import run_provenance

RESULTS_DIR = ROOT / "results" / "releases"
MANIFEST = manifest_path(ROOT / "results")
LEDGER_REPO = ROOT / ".asv" / "ledger"
LEDGER_CONFIG = ROOT / ".asv" / "releases.conf.json"
_AUTHOR = {"name": "vkbench ledger", "email": "ledger@vkbench.invalid"}


def release_date(version: str) -> str:
    """Upload time of ``executorch==version`` on PyPI; install time if offline."""
    from vkbench.build.index import fetch_index

    base = public_version(version)
    try:
        files = fetch_index("https://pypi.org/simple/executorch/")
        times = [f["upload-time"] for f in files if "upload-time" in f and (
            f"executorch-{base}-" in f["filename"] + "-" or f["filename"].startswith(f"executorch-{base}-"))]
        if times:
            return min(times)[:19] + "Z"
    except Exception as error:  # noqa: BLE001 - offline: fall back, and say so
        print(f"vkbench: PyPI unreachable ({error}); dating release by install time", file=sys.stderr)
    import executorch

    installed = Path(executorch.__file__).stat().st_mtime
    return dt.datetime.fromtimestamp(installed, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def load_manifest() -> list[Release]:
    return read_ledger(MANIFEST.parent)


def save_manifest(releases: list[Release]) -> None:
    write_ledger(MANIFEST.parent, releases, __doc__.split("\n\n")[0])


def _git(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> str:
    """git in the ledger repo, with ``env`` added to this process's environment."""
    return git.text(args, cwd=LEDGER_REPO, env={**os.environ, **(env or {})}, input=stdin)


def rebuild_ledger(releases: list[Release]) -> list[Release]:
    """(Re)create the ledger repo; returns releases sorted by date, with hashes."""
    LEDGER_REPO.mkdir(parents=True, exist_ok=True)
    if not (LEDGER_REPO / ".git").exists():
        git.run(["init", "-q", "-b", "main", str(LEDGER_REPO)])
    parent: str | None = None
    ordered = sorted(releases, key=lambda r: r.date)
    for release in ordered:
        text = f"executorch {release.version}\nupstream git_version {release.git_version}\n"
        blob = _git("hash-object", "-w", "--stdin", stdin=text)
        tree = _git("mktree", stdin=f"100644 blob {blob}\tRELEASE\n")
        stamp = release.date.replace("Z", "+0000")
        env = {
            "GIT_AUTHOR_NAME": _AUTHOR["name"], "GIT_AUTHOR_EMAIL": _AUTHOR["email"],
            "GIT_COMMITTER_NAME": _AUTHOR["name"], "GIT_COMMITTER_EMAIL": _AUTHOR["email"],
            "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp,
        }
        message = f"executorch {release.version} (upstream {release.git_version})"
        args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
        parent = _git(*args, env=env)
        release.commit = parent
    if parent:
        _git("update-ref", "refs/heads/main", parent)
        for release in ordered:
            _git("tag", "-f", f"v{release.version.split('+')[0]}", release.commit or "")
    return ordered


def rekey_results(renamed: dict[str, str]) -> None:
    """Point stored asv results (and their sidecars) at new ledger hashes after a re-chain."""
    for path in result_paths(RESULTS_DIR):
        with locks.locked(path.parent):
            record = read_file(path)
            if record.commit in renamed:
                old, record.commit = record.commit, renamed[record.commit]
                target = path.with_name(renamed[old][:8] + path.name[8:])
                write_file(record, target)
                sidecar.move(path, target)
                if target != path:
                    path.unlink()


def stable_env_name() -> str:
    """Environment identity for results, independent of where the checkout lives."""
    return f"existing-py{sys.version_info.major}.{sys.version_info.minor}"


def normalize_results(commit: str, machine: str, results: Path | None = None) -> Path | None:
    """Merge this run's results into one file keyed by a path-independent environment.

    ``asv run -E existing:/path/to/python`` names the environment, and the
    ``python`` graph parameter, after the interpreter's path, which would put
    each checkout (and each release's venv) on a separate graph. We file the
    results as ``existing-py3.12`` with ``python`` = ``3.12``, merging into any
    earlier results for the same commit so ``-b`` subsets accumulate. ``results``: the asv results
    folder (default: the releases').
    """
    folder = (results or RESULTS_DIR) / machine
    with locks.locked(folder):  # one writer of the machine's files (vkbench.results.locks)
        return _normalize(commit, folder)


def _normalize(commit: str, folder: Path) -> Path | None:
    target_name = stable_env_name()
    target = folder / f"{commit[:8]}-{target_name}.json"
    merged = read_file(target) if target.exists() else None
    for path in sorted(folder.glob(f"{commit[:8]}-existing-*.json")):
        if path == target:
            continue
        record = read_file(path)
        if merged is None:
            merged = record
        else:
            merged.results.update(record.results)
            merged.durations.update(record.durations)
            merged.date = record.date or merged.date
        sidecar.move(path, target)
        path.unlink()
    if merged is None:
        return None
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    merged.env_name = target_name
    merged.document.setdefault("params", {})["python"] = python
    merged.document["python"] = python
    write_file(merged, target)
    return target


def ensure_installed_release() -> Release:
    """Add the installed ExecuTorch to the manifest and ledger; return it with its hash."""
    identity = executorch_identity()
    version = str(identity["version"])
    releases = load_manifest()
    before = {r.version: r.commit for r in releases}
    if version not in before:
        releases.append(Release(version, identity["git_version"], release_date(version)))
    ordered = rebuild_ledger(releases)
    renamed = {before[r.version]: r.commit for r in ordered
               if before.get(r.version) and before[r.version] != r.commit}
    if renamed:
        rekey_results({k: v for k, v in renamed.items() if k and v})
    save_manifest(ordered)
    return next(r for r in ordered if r.version == version)


def write_ledger_config(results_dir: Path | None = None) -> Path:
    """asv.conf.json, pointed at the ledger and at ``results_dir`` (results/releases)."""
    from vkbench.build.hooks import existing_env_config

    return existing_env_config(
        LEDGER_CONFIG, repo=str(LEDGER_REPO), branches=["main"], results_dir=str(results_dir or RESULTS_DIR),
        html_dir=str(ROOT / "html" / "releases"), benchmark_dir=str(ROOT / "benchmarks"),
        env_dir=str(ROOT / ".asv" / "env"))


def machine_name() -> str:
    """Stable, descriptive machine name (CI hostnames change every run)."""
    return settings.text("VKBENCH_MACHINE") or f"{platform.machine()}-{os.cpu_count()}core-cpu"


def _asv(*args: str, env: dict[str, str] | None = None) -> int:
    command = [sys.executable, "-m", "asv", *args]
    print("+ " + " ".join(command), file=sys.stderr, flush=True)
    return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode


def publish() -> int:
    """Rebuild the ledger from the manifest and ``asv publish`` results/releases to html/releases.

    The offline site around it is the caller's to make (:func:`vkbench.site.make_offline`): this
    layer runs asv and knows nothing of the pages.
    """
    rebuild_ledger(load_manifest())
    readable, problems = without_unreadable(RESULTS_DIR, ROOT / ".asv" / "publishable" / "releases")
    for problem in problems:
        print(f"vkbench publish: skipped {problem}", file=sys.stderr)
    config = write_ledger_config(readable)
    code = _asv("publish", "--config", str(config))
    write_ledger_config()  # recording goes on into the real results
    return code


def recorded_release(version: str) -> Release:
    """A release already in the manifest, with its ledger hash (the ledger is rebuilt)."""
    releases = rebuild_ledger(load_manifest())
    for release in releases:
        if release.version == version:
            return release
    known = ", ".join(r.version for r in releases)
    raise SystemExit(f"vkbench: release {version!r} is not in {MANIFEST.name} (known: {known})")


def record_installed(asv_args: list[str], release_version: str | None = None,
                     tier: str | None = None) -> int:
    """``asv run`` the suite against this interpreter, filed under the installed release.

    ``release_version`` files the results under a release already in the
    ledger instead, for an interpreter that cannot import that release's
    Python package (the device machine runs the release's C++ runtime only,
    through the C++ runner of :mod:`vkbench.execution.runners`).
    ``tier`` is written beside the results (their sidecar), with the run's other settings and the
    reason of every failed point.
    """
    release = recorded_release(release_version) if release_version else ensure_installed_release()
    config = write_ledger_config()
    machine = machine_name()
    print(f"vkbench: recording executorch {release.version} as ledger commit {release.commit[:8]} "
          f"on machine {machine}", file=sys.stderr)
    asv_machine.ensure(config, machine)
    stamp = run_provenance(asv_args, tier)
    stamp.base_wheel = release.version
    # asv writes its own folder, merged here after; its machine file is its own copy
    with recording(RESULTS_DIR, stamp) as run, asv_machine.own_home(run.env) as env:
        code = _asv("run", "--config", str(run.config(config)), "-E", f"existing:{sys.executable}",
                    "--set-commit-hash", str(release.commit), "--machine", machine,
                    "--show-stderr", *asv_args, env=env)
    normalize_results(str(release.commit), machine)
    return code
