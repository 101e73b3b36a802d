"""Lowering fingerprints: which ExecuTorch files a tier's lowering reads, and their content at any commit.

If every input of a lowering is byte-identical between two commits, its
counts are identical. The inputs are found by running the lowering, not by
guessing: :func:`recorder` is an audit hook (:class:`vkbench.suite.reads.FileRecorder`,
shared with the suite's own measurement) that notes every file of the installed
``executorch`` package that is imported or opened (schemas, YAML op tables) and
every directory that ExecuTorch code itself lists (``data/bin``'s flatc; not the
import machinery's own listings), while a tier's workloads are lowered
(:func:`measure_inputs`). The result,
:class:`Inputs`, names them as wheel paths (``executorch/exir/pass_base.py``).

A commit's fingerprint (:func:`fingerprints`) is then computed straight from
a git mirror, without a build: each wheel path is mapped to the file of the
checkout that the ``aot`` build would install there (the ``package-dir`` of
the commit's ``pyproject.toml``, through ``src/executorch``'s symlinks, as
:func:`vkbench.build.overlay.package_dirs` does on a checkout), and its blob id
read with one ``git cat-file --batch-command`` process for the whole range.
Files the checkout does not provide (native parts, generated Python) come
from the base wheel, so the base release the ``aot`` build picks for the
commit's ``version.txt`` is part of the fingerprint, as is the torch version.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vkbench import git
from vkbench.suite.documents import read_document, write_document
from vkbench.suite.reads import FileRecorder

SCHEMA = 1
#: Tiers whose workload set :func:`measure_inputs` can run (the gate's probes, Blocks and fast policies).
WORKLOAD_SETS = ("probes", "gate")


@dataclass
class Inputs:
    """What one workload set's lowering read of the installed ``executorch`` package."""

    tier: str
    files: list[str]  #: wheel paths of files imported or opened (``executorch/exir/pass_base.py``)
    dirs: list[str] = field(default_factory=list)  #: wheel paths of directories ExecuTorch code listed
    measured_with: str = ""  #: ``executorch.version`` of the measuring environment (version+commit)
    torch: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"vkbench_inputs": SCHEMA, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Inputs:
        if data.get("vkbench_inputs") != SCHEMA:
            raise ValueError(f"not a vkbench inputs file (vkbench_inputs != {SCHEMA})")
        return cls(str(data["tier"]), list(data["files"]), list(data.get("dirs") or []),
                   str(data.get("measured_with") or ""), str(data.get("torch") or ""))

    @classmethod
    def read(cls, path: Path) -> Inputs:
        return read_document(path, cls.from_json)

    def write(self, path: Path) -> Path:
        return write_document(path, self.to_json())


def package_root() -> Path:
    """The installed ``executorch`` package directory (a namespace package: no ``__file__``)."""
    import executorch

    return Path(next(iter(executorch.__path__))).resolve()


def recorder() -> FileRecorder:
    """The process's audit hook on the installed ``executorch`` package (:mod:`vkbench.suite.reads`):
    its ``paths()`` are wheel paths, ``executorch/...``."""
    return FileRecorder.installed([package_root()])


def tier_workloads(tier: str) -> list[tuple[str, Callable[[], object]]]:
    """The lowerings a workload set runs, as the suite runs them (one lowering path)."""
    from vkbench.suite import catalogue
    from vkbench.workloads.probes import probe_coverage

    work: list[tuple[str, Callable[[], object]]] = [
        (f"probe/{name}", lambda name=name: probe_coverage(name)) for name in catalogue.PROBE_NAMES]
    if tier == "probes":
        return work
    if tier != "gate":
        raise KeyError(f"no workload set {tier!r}; known: {', '.join(WORKLOAD_SETS)}")
    from vkbench.workloads.policies import ENTRIES, survey_entry
    from vkbench.workloads.scaling import measure

    work.append(("blocks/50", lambda: measure(50)))
    work += [(f"policy/{name}", lambda name=name: survey_entry(ENTRIES[name], use_cache=True,
                                                                partition_only=True))
             for name in catalogue.FAST_ENTRIES]
    return work


def measure_inputs(tier: str, progress: Callable[[str], None] | None = None) -> Inputs:
    """Lower ``tier``'s workloads in this process and return what they read of ``executorch``."""
    import torch

    hook = recorder()
    with hook.recording():
        for name, run in tier_workloads(tier):
            if progress:
                progress(name)
            run()
    files, dirs = hook.paths()
    try:
        from executorch import version as et_version

        measured = f"{et_version.__version__} {getattr(et_version, 'git_version', '')}".strip()
    except ImportError:
        measured = ""
    return Inputs(tier, files, dirs, measured, torch.__version__)


# ---------------------------------------------------------------------------
# the same files at any commit of a mirror


class GitObjects:
    """One ``git cat-file --batch-command`` process: object info and contents by ``<rev>:<path>``."""

    def __init__(self, git_dir: Path) -> None:
        self.process = git.popen(["cat-file", "--batch-command"], git_dir=git_dir)

    def _ask(self, command: str, spec: str) -> tuple[str, str, int] | None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{command} {spec}\n".encode())
        self.process.stdin.flush()
        header = self.process.stdout.readline().decode().split()
        if len(header) != 3:  # "<spec> missing" or "<spec> ambiguous"
            return None
        return header[0], header[1], int(header[2])

    def info(self, spec: str) -> tuple[str, str] | None:
        """``(object id, type)`` of ``rev:path``, or None when the commit has no such path."""
        found = self._ask("info", spec)
        return (found[0], found[1]) if found else None

    def contents(self, spec: str) -> bytes | None:
        found = self._ask("contents", spec)
        if found is None:
            return None
        assert self.process.stdout is not None
        data = self.process.stdout.read(found[2])
        self.process.stdout.read(1)  # the newline after the contents
        return data

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=30)

    def __enter__(self) -> GitObjects:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def package_dirs_at(objects: GitObjects, commit: str) -> dict[str, str]:
    """``wheel dir -> repo dir`` of the ``executorch`` packages at ``commit`` (from its pyproject)."""
    mapping: dict[str, str] = {}
    text = objects.contents(f"{commit}:pyproject.toml")
    if text:
        try:
            data = tomllib.loads(text.decode(errors="replace"))
            mapping = dict(data.get("tool", {}).get("setuptools", {}).get("package-dir", {}) or {})
        except tomllib.TOMLDecodeError:
            mapping = {}
    mapping = {k: v for k, v in mapping.items() if k == "executorch" or k.startswith("executorch.")}
    if not mapping and objects.info(f"{commit}:src/executorch"):
        mapping = {"executorch": "src/executorch"}
    return {package.replace(".", "/"): source.strip("/") for package, source in mapping.items()}


def _through_symlinks(objects: GitObjects, commit: str, path: str, limit: int = 8) -> str | None:
    """``path`` at ``commit`` with each directory symlink on the way replaced by its target."""
    parts = path.split("/")
    for _ in range(limit):
        for depth in range(1, len(parts)):
            head = "/".join(parts[:depth])
            found = objects.info(f"{commit}:{head}")
            if found is None:
                return "/".join(parts)  # absent here: its blob reads "-" until a commit adds it
            if found[1] == "blob":  # a symlink (a directory component cannot be a file)
                target = (objects.contents(f"{commit}:{head}") or b"").decode(errors="replace")
                joined = posixpath.normpath(posixpath.join(posixpath.dirname(head), target))
                if joined.startswith(".."):
                    return None
                parts = joined.split("/") + parts[depth:]
                break
        else:
            return "/".join(parts)
    return None


def repo_paths(objects: GitObjects, commit: str, wheel_paths: Iterable[str]) -> dict[str, str | None]:
    """``wheel path -> repo path`` at ``commit`` (None: the checkout does not provide it)."""
    dirs = package_dirs_at(objects, commit)
    out: dict[str, str | None] = {}
    for wheel in wheel_paths:
        package = max((d for d in dirs if wheel == d or wheel.startswith(d + "/")), key=len, default=None)
        if package is None:
            out[wheel] = None
            continue
        rest = wheel[len(package):].lstrip("/")
        out[wheel] = _through_symlinks(objects, commit, posixpath.join(dirs[package], rest))
    return out


@dataclass
class Fingerprint:
    """The lowering inputs of one commit: base release, torch, and the blob of every input file."""

    commit: str
    base: str
    torch: str
    blobs: dict[str, str]  #: repo path (or ``wheel:<path>`` when the checkout lacks it) -> object id or "-"

    @property
    def digest(self) -> str:
        text = json.dumps([self.base, self.torch, sorted(self.blobs.items())])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def changed(self, other: Fingerprint) -> list[str]:
        """Input paths whose content differs from ``other`` (the base and torch named as such)."""
        paths = sorted(p for p in set(self.blobs) | set(other.blobs)
                       if self.blobs.get(p) != other.blobs.get(p))
        extra = [f"base wheel {other.base} -> {self.base}"] if self.base != other.base else []
        return extra + ([f"torch {other.torch} -> {self.torch}"] if self.torch != other.torch else []) + paths


def _version_at(objects: GitObjects, commit: str) -> str | None:
    text = objects.contents(f"{commit}:version.txt")
    return text.decode(errors="replace").strip() if text else None


def fingerprints(git_dir: Path, commits: Sequence[str], inputs: Inputs,
                 base_for: Callable[[str | None], str]) -> list[Fingerprint]:
    """The fingerprint of each commit. ``base_for(version.txt)`` names the base release the ``aot``
    build would use (:func:`vkbench.build.aot.nearest_release` over the index's releases).

    The wheel-to-repo mapping is worked out once per state of ``pyproject.toml`` and
    ``src/executorch`` (it changes a handful of times in a thousand commits), the blobs per commit.
    """
    wanted = list(inputs.files) + list(inputs.dirs)
    layouts: dict[tuple[str, str], dict[str, str | None]] = {}
    out = []
    with GitObjects(git_dir) as objects:
        for commit in commits:
            key = tuple((objects.info(f"{commit}:{p}") or ("-", ""))[0] for p in ("pyproject.toml",
                                                                                  "src/executorch"))
            if key not in layouts:
                layouts[key] = repo_paths(objects, commit, wanted)
            blobs = {}
            for wheel, repo in layouts[key].items():
                if repo is None:
                    blobs[f"wheel:{wheel}"] = "-"  # from the base wheel: its version is in the fingerprint
                    continue
                found = objects.info(f"{commit}:{repo}")
                blobs[repo] = found[0] if found else "-"
            out.append(Fingerprint(commit, base_for(_version_at(objects, commit)), inputs.torch, blobs))
    return out


def widen(inputs: Inputs, read: Iterable[tuple[str, set[str]]]) -> tuple[Inputs, dict[str, list[str]]]:
    """``inputs`` plus every file a recorded commit read that the set lacks (a new import there).

    ``read`` is (commit, files its lowering read) per recorded commit, from the sidecars of recorded
    upstream commits (``ResultFile.sidecar.inputs``); a file outside
    the set means the set was measured where that code did not exist, so the classes are recomputed
    with it. Returns the widened set and, per commit, the files it added.
    """
    known = set(inputs.files)
    added: dict[str, list[str]] = {}
    for commit, files in read:
        extra = sorted(files - known - set().union(*map(set, added.values())))
        if extra:
            added[commit] = extra
    if not added:
        return inputs, {}
    files = sorted(known.union(*map(set, added.values())))
    note = f"{inputs.measured_with}; + files read at {len(added)} recorded commits".strip("; ")
    return Inputs(inputs.tier, files, list(inputs.dirs), note, inputs.torch), added
