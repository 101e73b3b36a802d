"""Runtime fingerprints: which ExecuTorch files a Vulkan runtime build compiles or embeds, at any commit.

The ``full`` build (:mod:`vkbench.build.full`) compiles only ``backends/vulkan`` against the base
wheel's core (``libexecutorch.so`` and its headers). If every file that build reads is byte-identical
between two commits, and the base wheel is the same, the two builds are the same library, so every
runtime number (ladder rungs, step limits, dispatch times) is its class's.

The inputs are taken from one build, not guessed (:func:`inputs_from_build`):

* every header each object was compiled with: Ninja's deps log (the compilers' ``-MD`` depfiles,
  ``ninja -t deps``);
* every input of the library's build graph (``ninja -t inputs vulkan_backend``): the C++ sources,
  the schema ``flatc`` compiles, and the shader list (each ``.glsl``/``.yaml``/``.h`` that
  ``gen_vulkan_spv.py`` turns into the SPIR-V embedded in the library, and the script itself);
* the CMake files the configure step read (the ``RERUN_CMAKE`` edge of ``build.ninja``);
* the directories the shader generator lists (its ``--glsl-path``): a new shader file changes
  the directory's tree even before a build lists it.

Each is kept as a path of the ExecuTorch repository; a file inside a submodule (Vulkan-Headers,
volk, VulkanMemoryAllocator, flatbuffers) is kept as the submodule's path, whose content at a commit
is the commit the superproject pins. Files of the base wheel (headers, ``libexecutorch.so``,
``flatc``), of the build folder (generated) and of the system (compiler, libc) are counted, not
kept: the base wheel's version is part of the fingerprint, the others are the build machine's.

The fingerprint of a commit (:func:`runtime_fingerprints`) is then read from a git mirror alone:
blob ids for files, tree ids for directories, pinned commits for submodules, plus the base release
the build would use for the commit's ``version.txt``; classes are runs of equal fingerprints
(:func:`vkbench.commits.classes.group`).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from vkbench.commits.classes import Classes, classify
from vkbench.commits.fingerprint import Fingerprint, GitObjects, Inputs

#: The tier name the runtime inputs and classes are stored under.
TIER = "runtime"
#: The library target of the ``full`` build's CMake project.
TARGET = "vulkan_backend"
#: Prefix of an input that is a submodule (its content: the commit the superproject pins).
SUBMODULE = "submodule:"
#: Prefix of an input that is a directory (its content: the tree, so an added file changes it).
DIRECTORY = "dir:"


def _ninja(cmake_dir: Path, *args: str) -> str:
    return subprocess.run(["ninja", "-C", str(cmake_dir), *args], capture_output=True, text=True,
                          check=True).stdout


def build_paths(cmake_dir: Path, target: str = TARGET) -> tuple[set[str], set[str]]:
    """``(files, directories)`` the build of ``target`` in ``cmake_dir`` read, as absolute paths.

    Files: Ninja's deps log (headers, from the compilers' depfiles), the build graph's inputs of
    ``target``, and the CMake files of the configure step. Directories: each ``--glsl-path`` the
    shader generator lists.
    """
    cmake_dir = Path(cmake_dir).absolute()
    found: set[str] = set()
    for line in _ninja(cmake_dir, "-t", "deps").splitlines():
        if line.startswith("    ") and line.strip():
            found.add(line.strip())
    found.update(line.strip() for line in _ninja(cmake_dir, "-t", "inputs", target).splitlines()
                 if line.strip())
    graph = (cmake_dir / "build.ninja").read_text(errors="replace")
    rerun = re.search(r"^build build\.ninja: RERUN_CMAKE \|(.*?)(?<!\$)$", graph, re.M)
    if rerun:
        found.update(p.replace("$ ", " ") for p in re.split(r"(?<!\$) ", rerun.group(1).strip()) if p)
    directories = set()
    for command in re.findall(r"^\s+COMMAND = (.*gen_vulkan_spv\.py.*)$", graph, re.M):
        words = shlex.split(command)
        directories.update(words[i + 1] for i, word in enumerate(words[:-1]) if word == "--glsl-path")
    absolute = {os.path.normpath(p if os.path.isabs(p) else os.path.join(cmake_dir, p)) for p in found}
    return absolute, {os.path.normpath(d) for d in directories}


def submodule_paths(checkout: Path) -> list[str]:
    """Submodule paths named by the checkout's ``.gitmodules``."""
    path = Path(checkout) / ".gitmodules"
    if not path.is_file():
        return []
    return re.findall(r"^\s*path\s*=\s*(\S+)\s*$", path.read_text(errors="replace"), re.M)


def classify_path(path: str, checkout: Path, submodules: Sequence[str], wheel: Path | None,
                  build_dir: Path | None) -> tuple[str, str]:
    """``(kind, repository path)`` of one absolute path the build read.

    kind: ``file`` or ``submodule`` (kept, with the path in the ExecuTorch repository), ``wheel``,
    ``build`` or ``system`` (counted only).
    """
    real = os.path.realpath(path)
    root = os.path.realpath(checkout)
    for folder, kind in ((wheel, "wheel"), (build_dir, "build")):
        if folder is not None and (real + "/").startswith(os.path.realpath(folder) + "/"):
            return kind, ""
    if not (real + "/").startswith(root + "/"):
        return "system", ""
    relative = os.path.relpath(real, root)
    for module in submodules:
        if relative == module or relative.startswith(module + "/"):
            return "submodule", module
    return "file", relative


def inputs_from_build(cmake_dir: Path, checkout: Path, wheel: Path | None = None,
                      measured_with: str = "") -> tuple[Inputs, dict[str, int]]:
    """The runtime inputs one build read (see the module doc), and how many paths of each kind it read.

    ``checkout``: the ExecuTorch source tree the build compiled (symlinks to it resolve);
    ``wheel``: the base ``executorch`` package it compiled against. ``Inputs.files`` holds repository
    paths, ``submodule:<path>`` for a submodule; ``Inputs.dirs`` the listed directories.
    """
    files, directories = build_paths(cmake_dir)
    submodules = submodule_paths(checkout)
    build_dir = Path(cmake_dir).absolute().parent
    kept: set[str] = set()
    counts: Counter[str] = Counter()
    for path in files:
        kind, relative = classify_path(path, checkout, submodules, wheel, build_dir)
        counts[kind] += 1
        if kind == "file":
            kept.add(relative)
        elif kind == "submodule":
            kept.add(SUBMODULE + relative)
    dirs = set()
    for path in directories:
        kind, relative = classify_path(path, checkout, submodules, wheel, build_dir)
        if kind == "file":
            dirs.add(relative.rstrip("/"))
    counts["dirs"] = len(dirs)
    return Inputs(TIER, sorted(kept), sorted(dirs), measured_with, ""), dict(counts)


def _gitlink(objects: GitObjects, commit: str, path: str) -> str:
    """The commit a submodule path is pinned to at ``commit`` ("-" where there is none)."""
    parent, _, name = path.rpartition("/")
    tree = objects.contents(f"{commit}:{parent}" if parent else f"{commit}^{{tree}}")
    if tree is None:
        return "-"
    position = 0
    while position < len(tree):  # raw tree: "<mode> <name>\0<20-byte id>" per entry
        space = tree.index(b" ", position)
        nul = tree.index(b"\0", space)
        mode, entry = tree[position:space], tree[space + 1:nul]
        if entry.decode(errors="replace") == name:
            return tree[nul + 1:nul + 21].hex() if mode == b"160000" else "-"
        position = nul + 21
    return "-"


def runtime_fingerprints(git_dir: Path, commits: Sequence[str], inputs: Inputs,
                         base_for: Callable[[str | None], str]) -> list[Fingerprint]:
    """The runtime fingerprint of each commit, from the mirror alone (one ``cat-file`` process)."""
    out = []
    with GitObjects(git_dir) as objects:
        for commit in commits:
            blobs: dict[str, str] = {}
            for path in inputs.files:
                if path.startswith(SUBMODULE):
                    blobs[path] = _gitlink(objects, commit, path[len(SUBMODULE):])
                else:
                    found = objects.info(f"{commit}:{path}")
                    blobs[path] = found[0] if found else "-"
            for path in inputs.dirs:
                found = objects.info(f"{commit}:{path}")
                blobs[DIRECTORY + path] = found[0] if found else "-"
            version = objects.contents(f"{commit}:version.txt")
            base = base_for(version.decode(errors="replace").strip() if version else None)
            out.append(Fingerprint(commit, base, inputs.torch, blobs))
    return out


def runtime_classes(git_dir: Path, revision_range: str, inputs: Inputs,
                    base_for: Callable[[str | None], str]) -> Classes:
    """The runtime classes of ``revision_range``'s first-parent commits."""
    return classify(git_dir, revision_range, inputs, base_for, fingerprint=runtime_fingerprints)
