"""One ExecuTorch source tree, moved from commit to commit, so a kept build folder rebuilds only what changed.

A Vulkan runtime build per runtime class (``docs/runtime.md``) is cheap only when ninja sees old
timestamps on every file that did not change: a fresh checkout per commit touches every file and
rebuilds all. So a commit is exported from the mirror into a scratch folder (``git archive``, without
``examples/``, whose large files the mirror may not hold), the Vulkan backend's submodules are
exported from their own mirrors at the commits the tree pins, and :func:`sync` then writes into the
kept tree only the files whose bytes differ and deletes the ones the commit no longer has.
Submodules the runtime does not build (XNNPACK's, ...) are left as they are in the kept tree.
"""

from __future__ import annotations

import configparser
import filecmp
import io
import os
import re
import shutil
import tarfile
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from vkbench import git

#: Top-level folders left out of an export (not compiled by the runtime; large files a mirror may lack).
EXCLUDED = ("examples",)
#: The submodules a Vulkan runtime build compiles or includes, exported from their own mirrors: the three
#: under the backend and flatbuffers' headers, which the backend's generated schema header includes
#: (``vkbench runtime inputs`` lists these four as what a build read; docs/runtime.md).
RUNTIME_SUBMODULES = ("backends/vulkan/third-party/", "third-party/flatbuffers")


class TreeError(RuntimeError):
    """A commit or a submodule mirror that cannot be exported; ``str()`` is one line naming it."""


@dataclass
class Synced:
    """What :func:`sync` wrote: paths relative to the tree, by kind."""

    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.added) + len(self.modified) + len(self.deleted)


def _under(rel: str, roots: Iterable[str]) -> bool:
    return any(rel == root or rel.startswith(root.rstrip("/") + "/") for root in roots)


def sync(src: Path, dst: Path, keep: Iterable[str] = ()) -> Synced:
    """Make ``dst`` hold ``src``'s files, writing only those whose bytes (or link target) differ and
    deleting those ``src`` lacks; paths under ``keep`` are left alone on both sides."""
    keep = list(keep)
    done = Synced()
    seen: set[str] = set()
    for root, dirs, files in os.walk(src):
        here = Path(root).relative_to(src)
        for name in [*files, *(d for d in dirs if (Path(root) / d).is_symlink())]:
            rel = str(here / name) if str(here) != "." else name
            if _under(rel, keep):
                continue
            seen.add(rel)
            source, target = src / rel, dst / rel
            if source.is_symlink():
                if target.is_symlink() and os.readlink(target) == os.readlink(source):
                    continue
                existed = target.exists() or target.is_symlink()
                if target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target)
                elif existed:
                    target.unlink()
                target.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(os.readlink(source), target)
                (done.modified if existed else done.added).append(rel)
                continue
            if target.is_file() and not target.is_symlink() and filecmp.cmp(source, target, shallow=False):
                continue
            existed = target.exists() or target.is_symlink()
            if target.is_symlink():
                target.unlink()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            shutil.copymode(source, target)
            (done.modified if existed else done.added).append(rel)
    for root, _, files in os.walk(dst):
        here = Path(root).relative_to(dst)
        for name in files:
            rel = str(here / name) if str(here) != "." else name
            if rel not in seen and not _under(rel, keep) and not (src / rel).exists():
                (dst / rel).unlink()
                done.deleted.append(rel)
    return done


def _extract(git_dir: Path, commit: str, paths: list[str], out: Path) -> None:
    archive = git.run(["archive", "--format=tar", commit, *paths], git_dir=git_dir)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(out, filter="tar")


def _extract_present(git_dir: Path, commit: str, out: Path) -> list[str]:
    """Every file of ``commit`` whose blob ``git_dir`` holds, written under ``out``; returns the paths
    whose blob it lacks (a mirror snapshot can miss large files: Vulkan-Headers' C++ ``.hpp``, which
    the C runtime never includes; the build then says so if one was needed)."""
    entries = []
    for line in git.run(["ls-tree", "-r", "-z", commit], git_dir=git_dir).decode().split("\0"):
        if line:
            meta, path = line.split("\t", 1)
            mode, kind, sha = meta.split()
            if kind == "blob":
                entries.append((mode, sha, path))
    wanted = "".join(f"{sha}\n" for _, sha, _ in entries)
    batch = git.run(["cat-file", "--batch"], git_dir=git_dir, input=wanted)
    missing, at = [], 0
    for mode, _, path in entries:
        end = batch.index(b"\n", at)
        header = batch[at:end].decode().split()
        if header[-1] == "missing":
            missing.append(path)
            at = end + 1
            continue
        size = int(header[2])
        data, at = batch[end + 1:end + 1 + size], end + 1 + size + 1
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            os.symlink(data.decode(), target)
        else:
            target.write_bytes(data)
            if mode == "100755":
                target.chmod(0o755)
    return missing


def submodules(git_dir: Path, commit: str) -> dict[str, tuple[str, str]]:
    """Path -> (pinned commit, url) of every submodule of ``commit``."""
    pinned = {}
    for line in git.text(["ls-tree", "-r", commit], git_dir=git_dir).splitlines():
        meta, path = line.split("\t", 1)
        _, kind, sha = meta.split()
        if kind == "commit":
            pinned[path] = sha
    config = configparser.ConfigParser()
    config.read_string(git.text(["show", f"{commit}:.gitmodules"], git_dir=git_dir, check=False) or "")
    urls = {config[s].get("path", ""): config[s].get("url", "") for s in config.sections()}
    return {path: (sha, urls.get(path, "")) for path, sha in pinned.items()}


def mirror_of(url: str, mirrors: Path) -> Path:
    """The git dir of ``url``'s mirror under ``mirrors`` (``owner+name/repo``, as ``fetch`` lays them)."""
    match = re.search(r"github\.com[/:]([^/]+)/([^/]+?)(?:\.git)?/?$", url)
    if not match:
        raise TreeError(f"not a GitHub submodule url: {url!r}")
    return mirrors / f"{match[1]}+{match[2]}" / "repo"


def export(git_dir: Path, commit: str, out: Path, mirrors: Path) -> tuple[list[str], list[str]]:
    """``commit``'s tree (less :data:`EXCLUDED`) in ``out``, with the runtime's submodules from their
    mirrors under ``mirrors``; returns the submodule paths left empty (not the runtime's) and the
    submodule files their mirrors lack."""
    top = [line.split("\t", 1)[1] for line in git.text(["ls-tree", commit], git_dir=git_dir).splitlines()]
    _extract(git_dir, commit, [p for p in top if p not in EXCLUDED], out)
    skipped, lacking = [], []
    for path, (sha, url) in sorted(submodules(git_dir, commit).items()):
        if not _under(path, RUNTIME_SUBMODULES):
            skipped.append(path)
            continue
        mirror = mirror_of(url, mirrors)
        if not mirror.is_dir():
            raise TreeError(f"no mirror of {url} at {mirror} (submodule {path} of {commit[:8]})")
        (out / path).mkdir(parents=True, exist_ok=True)
        lacking += [f"{path}/{missing}" for missing in _extract_present(mirror, sha, out / path)]
    return skipped, lacking


def move_tree(git_dir: Path, commit: str, tree: Path, mirrors: Path) -> tuple[Synced, list[str]]:
    """Move the kept source ``tree`` to ``commit``: export it aside, then :func:`sync` into ``tree``
    (submodules other than the runtime's are kept as they are). Returns what was written and the
    submodule files no mirror held (absent from the tree)."""
    tree.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="vkbench-tree-", dir=tree.parent) as scratch:
        skipped, lacking = export(git_dir, commit, Path(scratch), mirrors)
        return sync(Path(scratch), tree, keep=[*skipped, *EXCLUDED]), lacking
