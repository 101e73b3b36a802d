"""asv over upstream ExecuTorch commits from a local git mirror.

Behind a firewall, GitHub is unreachable but a mirror of
``pytorch/executorch`` may not be complete: its submodules are absent and
some large blobs (gifs, ``.a`` archives, tokenizer files) were left out.
asv clones ``repo`` (the GitHub URL, kept so results and commit links stay
upstream's), checks commits out and always runs ``git submodule update
--init --recursive``. This module makes all of that work against the mirror
without touching any git config file, only through ``GIT_CONFIG_COUNT`` /
``GIT_CONFIG_KEY_n`` / ``GIT_CONFIG_VALUE_n`` in the environment of asv:

* ``url.<mirror>.insteadOf`` rewrites the GitHub URL (with and without
  ``.git``) to the mirror's path; a plain path makes ``git clone`` a local
  copy, which skips the connectivity check missing blobs would fail;
* ``submodule.<name>.update=none`` for every submodule ever named in the
  mirror's ``.gitmodules``, so the submodule step skips them (the ``aot``
  build needs none);
* ``init.templateDir`` points at a template whose ``info/sparse-checkout``
  (non-cone, ``core.sparseCheckout=true``) includes everything but the paths
  whose blobs the mirror lacks, so checkouts never read them.

What the mirror lacks is read from the mirror itself (``git rev-list
--objects --missing=print``, then the paths that ever held those objects
from ``git log --raw``) and cached under ``.asv/upstream/`` per state of the
mirror's refs (about 10 s on upstream's 100k commits).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path

from vkbench import git
from vkbench.paths import ROOT
from vkbench.results import sidecar
from vkbench.results.asv_files import read_dir, without_unreadable
from vkbench.results.model import Provenance, ResultFile
from vkbench.results.recording import recording
from vkbench.results.run_log import LOG_SETTING
from vkbench.runs import asv_machine
from vkbench.runs import benchmark_split as split_run
from vkbench.runs.provenance import run_provenance
from vkbench.suite.tiers import bench_args

#: Where templates, the mirror facts cache and the derived asv config live.
STATE_DIR = ROOT / ".asv" / "upstream"
DEFAULT_CONFIG = ROOT / ".asv" / "upstream.conf.json"
#: The URLs asv (and submodules of other projects) use for upstream.
UPSTREAM_URLS = ("https://github.com/pytorch/executorch.git", "https://github.com/pytorch/executorch")
#: asv subcommands that take ``--machine``; the first three also record and need it registered.
MACHINE_SUBCOMMANDS = ("run", "continuous", "find", "compare", "show")
RECORDING_SUBCOMMANDS = ("run", "continuous", "find")
_SUBMODULE_HEADER = re.compile(r'^\s*\[\s*submodule\s+"((?:[^"\\]|\\.)+)"\s*\]', re.MULTILINE)


class UpstreamError(RuntimeError):
    """A mirror or argument the command cannot use; the message is one line."""


@dataclass
class MirrorFacts:
    """What asv's git calls must work around in one state of the mirror."""

    refs: str  # digest of ``git for-each-ref``: the cache key
    submodules: list[str] = field(default_factory=list)
    missing: dict[str, list[str]] = field(default_factory=dict)  # object -> paths that held it

    @property
    def missing_paths(self) -> list[str]:
        return sorted({p for paths in self.missing.values() for p in paths})


# ---------------------------------------------------------------------------
# reading the mirror


def git_dir(mirror: Path) -> Path:
    """The mirror's git directory (a bare mirror is its own), or one line saying it is none."""
    found = git.text(["rev-parse", "--absolute-git-dir"], cwd=mirror, check=False)
    if not found:
        raise UpstreamError(f"{mirror} is not a git repository (git rev-parse --absolute-git-dir failed)")
    return Path(found)


def refs_digest(gdir: Path) -> str:
    """A digest of every ref: when it changes, the mirror was updated."""
    refs = git.run(["for-each-ref", "--format=%(objectname) %(refname)"], git_dir=gdir)
    return hashlib.sha256(refs).hexdigest()[:16]


def missing_objects(gdir: Path) -> set[str]:
    """Objects reachable from some ref that the mirror's object store lacks."""
    out = git.run(["rev-list", "--objects", "--missing=print", "--all"], git_dir=gdir).decode()
    return {line[1:].strip() for line in out.splitlines() if line.startswith("?")}


def scan_history(gdir: Path, missing: set[str]) -> tuple[dict[str, list[str]], set[str]]:
    """One pass over every commit's raw diff: paths that held ``missing``, and ``.gitmodules`` blobs.

    ``--cc`` adds what merges themselves introduce; ``-z`` keeps odd path
    names unquoted. A raw entry is ``:modes shas status`` then the path;
    the object the commit wrote is the last sha in both the plain and the
    combined (``::``) form.
    """
    out = git.run(["log", "--all", "--cc", "--format=", "--raw", "--no-abbrev", "--no-renames", "-z"],
                  git_dir=gdir)
    holders: dict[str, set[str]] = {}
    gitmodules: set[str] = set()
    parts = out.split(b"\0")
    index = 0
    while index + 1 < len(parts):
        meta = parts[index].lstrip(b"\n")
        if not meta.startswith(b":"):
            index += 1
            continue
        path = parts[index + 1].decode("utf-8", "surrogateescape")
        written = meta.split()[-2].decode()
        if written in missing:
            holders.setdefault(written, set()).add(path)
        if path == ".gitmodules" and set(written) != {"0"}:
            gitmodules.add(written)
        index += 2
    return {sha: sorted(paths) for sha, paths in holders.items()}, gitmodules


def submodule_names(gdir: Path, blobs: Iterable[str]) -> list[str]:
    """Submodule names declared in any of the ``.gitmodules`` blobs (missing ones are skipped)."""
    wanted = sorted(blobs)
    if not wanted:
        return []
    out = git.run(["cat-file", "--batch"], git_dir=gdir, input="\n".join(wanted) + "\n")
    names: set[str] = set()
    position = 0
    while position < len(out):
        end = out.index(b"\n", position)
        header = out[position:end].split()
        position = end + 1
        if len(header) < 3 or header[1] != b"blob":  # "<sha> missing"
            continue
        size = int(header[2])
        text = out[position:position + size].decode("utf-8", "replace")
        position += size + 1
        names.update(n.replace('\\"', '"').replace("\\\\", "\\") for n in _SUBMODULE_HEADER.findall(text))
    return sorted(names)


def mirror_facts(mirror: Path, state_dir: Path = STATE_DIR) -> MirrorFacts:
    """Submodule names and missing-object paths of the mirror, cached per refs state."""
    gdir = git_dir(mirror)
    digest = refs_digest(gdir)
    cache = state_dir / f"mirror-{hashlib.sha256(str(gdir).encode()).hexdigest()[:12]}.json"
    try:
        data = json.loads(cache.read_text())
        if data.get("refs") == digest:
            return MirrorFacts(data["refs"], list(data["submodules"]), dict(data["missing"]))
    except (OSError, ValueError, TypeError, KeyError):
        pass
    missing = missing_objects(gdir)
    holders, gitmodules = scan_history(gdir, missing)
    unplaced = sorted(missing - holders.keys())
    if unplaced:
        print(f"vkbench upstream: {len(unplaced)} missing object(s) in no commit's raw diff "
              f"(first {unplaced[0]}); checkouts that need them will fail", file=sys.stderr)
    facts = MirrorFacts(refs=digest, submodules=submodule_names(gdir, gitmodules), missing=holders)
    state_dir.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"mirror": str(gdir), **asdict(facts)}, indent=1) + "\n")
    return facts


# ---------------------------------------------------------------------------
# what git is told


def sparse_pattern(path: str) -> str:
    """A non-cone sparse-checkout pattern matching exactly ``/path`` (gitignore escaping)."""
    escaped = re.sub(r"([\\*?\[\]!#])", r"\\\1", path)
    if escaped.endswith(" "):
        escaped = escaped[:-1] + "\\ "
    return "/" + escaped


def write_template(template: Path, excluded: Iterable[str]) -> Path:
    """A git template dir whose ``info/sparse-checkout`` keeps all but ``excluded``."""
    lines = ["/*", *(f"!{sparse_pattern(p)}" for p in sorted(set(excluded)))]
    info = template / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "sparse-checkout").write_text("\n".join(lines) + "\n")
    return template


def git_settings(mirror: Path, submodules: Iterable[str], template: Path) -> list[tuple[str, str]]:
    """The ``(key, value)`` git config pairs that point upstream at the mirror."""
    target = str(mirror)
    settings = [(f"url.{target}.insteadOf", url) for url in UPSTREAM_URLS]
    settings += [(f"submodule.{name}.update", "none") for name in sorted(set(submodules))]
    settings += [("core.sparseCheckout", "true"), ("core.sparseCheckoutCone", "false"),
                 ("init.templateDir", str(template))]
    return settings


def with_git_config(env: Mapping[str, str], settings: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``env`` plus ``settings`` as ``GIT_CONFIG_KEY_n``/``VALUE_n``, after any pairs it already had."""
    out = dict(env)
    start = int(out.get("GIT_CONFIG_COUNT", "0") or 0)
    for offset, (key, value) in enumerate(settings):
        out[f"GIT_CONFIG_KEY_{start + offset}"] = key
        out[f"GIT_CONFIG_VALUE_{start + offset}"] = value
    out["GIT_CONFIG_COUNT"] = str(start + len(settings))
    return out


def upstream_env(env: Mapping[str, str], settings: Sequence[tuple[str, str]],
                 python: str = sys.executable, base_prefix: str = sys.base_prefix) -> dict[str, str]:
    """The environment asv runs in: git settings, the base interpreter first on PATH.

    asv's virtualenv looks for ``python3.12`` on PATH (the base prefix's bin
    dir goes first so version-manager shims are not in the way), and the aot
    build links ``$VKBENCH_BASE_PYTHON``'s site-packages (torch & co.) into
    each env. ``GIT_TERMINAL_PROMPT=0``: a URL the mirror does not cover must
    fail, not wait for a password.
    """
    out = with_git_config(env, settings)
    out["PATH"] = os.pathsep.join([str(Path(base_prefix) / "bin"), env.get("PATH", "")])
    out["VKBENCH_BASE_PYTHON"] = python
    out["GIT_TERMINAL_PROMPT"] = "0"
    out["PYTHONUNBUFFERED"] = "1"
    return out


def prepare(mirror: Path, state_dir: Path = STATE_DIR,
            env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Read (or recall) the mirror's facts, write the template; return asv's environment."""
    mirror = mirror.resolve()
    facts = mirror_facts(mirror, state_dir)
    template = write_template(state_dir / f"git-template-{facts.refs}", facts.missing_paths)
    settings = git_settings(mirror, facts.submodules, template)
    print(f"vkbench upstream: {mirror} -> {len(facts.submodules)} submodule(s) skipped, "
          f"{len(facts.missing_paths)} path(s) with missing blobs left out of checkouts",
          file=sys.stderr)
    return upstream_env(os.environ if env is None else env, settings)


# ---------------------------------------------------------------------------
# asv


def asv_command(config: Path, asv_args: Sequence[str], machine: str, tier: str | None = None) -> list[str]:
    """``python -m asv <sub> --config <config> [--machine M] [-b TIER] ...`` for the pass-through args."""
    args = [a for a in asv_args if a != "--"] if asv_args[:1] == ["--"] else list(asv_args)
    if not args:
        raise UpstreamError("no asv subcommand given (e.g. vkbench upstream --mirror M -- run ...)")
    sub, rest = args[0], args[1:]
    has_machine = any(a in ("--machine", "-m") or a.startswith("--machine=") for a in rest)
    extra = ["--machine", machine] if sub in MACHINE_SUBCOMMANDS and not has_machine else []
    if tier:
        extra += bench_args(tier)
    return [sys.executable, "-m", "asv", sub, "--config", str(config), *extra, *rest]


def write_config(path: Path) -> Path:
    """asv.conf.json with absolute paths (``repo`` stays GitHub's), written to ``path``."""
    from vkbench.build.hooks import derived_config

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(derived_config(), indent=2) + "\n")
    return path


def run(mirror: Path, asv_args: Sequence[str], machine: str, config_out: Path = DEFAULT_CONFIG,
        state_dir: Path = STATE_DIR, tier: str | None = None, split: int = 1) -> int:
    """Run one asv subcommand against the mirror; return asv's exit status.

    ``split`` > 1 deals an ``asv run``'s benchmarks to that many asv processes side by side
    (:mod:`vkbench.runs.benchmark_split`)."""
    command = asv_command(config_out, asv_args, machine, tier)
    if split > 1 and command[3] != "run":
        raise UpstreamError(f"--split works with asv run only, not {command[3]}")
    if split > 1 and not split_run.selected(command):
        raise UpstreamError("--split deals the benchmarks of a -b pattern or --tier: give one")
    env = prepare(mirror, state_dir)
    config = write_config(config_out)
    if command[3] in RECORDING_SUBCOMMANDS:
        asv_machine.ensure(config, machine, env)
    if command[3] == "publish":
        command.insert(4, "--no-pull")
        config = prepare_publish(config, env)
        command[command.index("--config") + 1] = str(config)
    print("+ " + " ".join(command), file=sys.stderr, flush=True)
    if command[3] not in RECORDING_SUBCOMMANDS:
        return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
    results = Path(json.loads(config.read_text())["results_dir"])
    gdir = git_dir(mirror)
    per_commit = {}  # one mirror lookup per recorded commit

    def about(record: ResultFile) -> Provenance:
        if record.commit not in per_commit:
            per_commit[record.commit] = commit_provenance(gdir, record.commit)
        return per_commit[record.commit]

    if split > 1:
        return _run_split(command, env, config, results, split, machine, tier, about)
    with (recording(results, run_provenance(command, tier), about) as recorded,
          asv_machine.own_home({**env, LOG_SETTING: recorded.env[LOG_SETTING]}) as run_env):
        own = list(command)  # asv writes the run's own folder; the merge brings its rows here
        own[own.index("--config") + 1] = str(recorded.config(config))
        return subprocess.run(own, cwd=ROOT, env=run_env, check=False).returncode


def _run_split(command: list[str], env: Mapping[str, str], config: Path, results: Path, processes: int,
               machine: str, tier: str | None,
               about: Callable[[ResultFile], Provenance]) -> int:
    """``asv run`` as ``processes`` asv processes side by side, each a recording of its own (its own
    results folder and environments), merged into ``results`` as each ends; the worst exit status."""
    pattern = split_run.selected(command)
    patterns = split_run.deal(pattern, processes, split_run.measured_seconds(results, machine, pattern),
                              split_run.point_names(results), split_run.cache_keys(results))
    running: list[subprocess.Popen[bytes]] = []
    parts = []
    try:
        with ExitStack() as stack:
            for index, part in enumerate(patterns):
                stamp = run_provenance(split_run.with_bench(command, part), tier)
                recorded = stack.enter_context(recording(results, stamp, about))
                part_config = recorded.config(config, **split_run.part_settings(config, index))
                at = command.index("--config") + 1  # the part's config in place of the run's
                part_command = split_run.with_bench([*command[:at], str(part_config), *command[at + 1:]],
                                                    part)
                print("+ " + " ".join(part_command), file=sys.stderr, flush=True)
                part_env = {**env, LOG_SETTING: recorded.env[LOG_SETTING]}
                part_env = stack.enter_context(asv_machine.own_home(part_env))
                running.append(subprocess.Popen(part_command, cwd=ROOT, env=part_env))
                parts.append(recorded)
            codes = [process.wait() for process in running]
    finally:
        for process in running:
            if process.poll() is None:
                process.terminate()
    written = sorted({path for part in parts for path in part.written})
    for path in written:
        sidecar.merge(path, Provenance(bench_pattern=pattern))  # the merged file: all processes' pattern
    print(f"vkbench upstream: {len(patterns)} asv processes side by side, merged into {len(written)} "
          f"result file(s) in {results}", file=sys.stderr)
    return max(codes)


#: Release tags: what the published graphs show on their top axis (not ``ciflow/*`` or ``-rc`` tags).
RELEASE_TAG = re.compile(r"^v\d+\.\d+\.\d+$")


def release_tag(gdir: Path, commit: str) -> str | None:
    """The release tag at ``commit`` in the mirror, if any."""
    tags = git.text(["tag", "--points-at", commit], git_dir=gdir).split()
    return next((t for t in sorted(tags) if RELEASE_TAG.match(t)), None)


def commit_provenance(gdir: Path, commit: str) -> Provenance:
    """What the mirror says of a recorded commit: its release tag, the aot base wheel it ran on and the
    torch it pins (the run itself says which torch it lowered with)."""
    from vkbench.build.base_release import base_chooser
    from vkbench.build.messages import AotError

    version = git.text(["show", f"{commit}:version.txt"], git_dir=gdir) if commit else None
    try:
        base = base_chooser()(version)
    except AotError:
        base = None
    return Provenance(release=release_tag(gdir, commit), base_wheel=base,
                      torch_pin=torch_pin_at(gdir, commit))


def torch_pin_at(gdir: Path, commit: str) -> str | None:
    """The torch ``commit`` pins (its ``torch_pin.py`` in the mirror), None where it has none."""
    from vkbench.build.full import pinned_torch

    pin = git.text(["show", f"{commit}:torch_pin.py"], git_dir=gdir, check=False) if commit else None
    return pinned_torch(pin)["torch_pin"]


def stamp_torch_pins(root: Path, gdir: Path) -> list[tuple[Path, str | None]]:
    """Give every result file under ``root`` whose provenance lacks it the torch its commit pins (read
    from the mirror ``gdir``: ``torch_pin.py`` at the file's commit; files of commits without one get
    nothing). Only that field is added; the stamp is a fact of the commit, like its release tag."""
    stamped = []
    for record in read_dir(root).files:
        if record.sidecar.provenance.torch_pin is not None:
            continue
        pin = torch_pin_at(gdir, record.commit)
        if pin is not None:
            sidecar.merge(record.path, Provenance(torch_pin=pin))
        stamped.append((record.path, pin))
    return stamped


def clone_dir(config: Path) -> Path:
    """asv's own clone of the project (``project`` of the config, beside the config file)."""
    return (config.parent / json.loads(config.read_text())["project"]).resolve()


def prepare_publish(config: Path, env: Mapping[str, str]) -> Path:
    """Ready ``asv publish --no-pull`` over the mirror; return the config it should read.

    asv's clone gets release tags only (:func:`release_tags_only`), made first if this is
    the first publish here. asv publish stops at the first result file it cannot parse, so
    unreadable ones are left out (one line each) through a config naming a copy of the rest.
    """
    settings_now = json.loads(config.read_text())
    release_tags_only(clone_dir(config), env, settings_now["repo"])
    readable, problems = without_unreadable(Path(settings_now["results_dir"]),
                                            config.parent / "publishable" / "upstream")
    for problem in problems:
        print(f"vkbench upstream: publish skips {problem}", file=sys.stderr)
    if not problems:
        return config
    config = config.with_name("upstream-publish.conf.json")
    config.write_text(json.dumps({**settings_now, "results_dir": str(readable)}, indent=2) + "\n")
    return config


def release_tags_only(clone: Path, env: Mapping[str, str], repo: str = UPSTREAM_URLS[0]) -> list[str]:
    """Bring asv's clone up to date with the mirror, then delete every tag but the release tags.

    asv publishes a graph's top axis from every tag of its clone: the mirror's ~330 tags (238
    ``ciflow/*``) crowd it into unreadable text. asv makes its clone on first use, with
    ``git clone --mirror <repo>`` (``env`` points ``repo`` at the mirror); where it does not
    exist yet it is made here the same way, so the first publish on a fresh machine is pruned
    too; where it does, it is fetched. ``publish`` then runs with ``--no-pull``, so the tags
    stay gone for it; the next ``run`` fetches them back, harmlessly.
    """
    if (clone / "objects").is_dir():
        git.run(["fetch", "--prune", "origin"], git_dir=clone, env=env, check=False)
    else:
        git.run(["clone", "--mirror", "--quiet", repo, str(clone)], env=env)
    tags = git.text(["tag", "-l"], git_dir=clone).split()
    dropped = [t for t in tags if not RELEASE_TAG.match(t)]
    for start in range(0, len(dropped), 200):
        git.run(["tag", "-d", *dropped[start:start + 200]], git_dir=clone)
    return dropped
