"""Which files of a few source trees a block of code reads: found by running it, not by guessing.

Two inputs are measured this way: the ExecuTorch files a lowering reads (the fingerprint of a
commit, :mod:`vkbench.commits.fingerprint`) and the vkbench and ``benchmarks/`` files a benchmark
module's records run (the suite's identity, :mod:`vkbench.suite.identity`). Both need the same
two things: an audit hook that notes every file opened and every directory listed under the
trees while the code runs (:class:`FileRecorder`), and the trees' modules found in
``sys.modules`` (:func:`module_files`), because a module whose bytecode was cached, or that was
imported before recording began, opens nothing the hook could see.

A path is named ``<tree name>/<path inside it>`` (``executorch/exir/pass_base.py``,
``vkbench/core/lowering.py``), so the name is the same wherever the tree is installed.

Only the standard library is imported here: the suite's measurement runs this module in a child
process before the code it measures is imported (:mod:`vkbench.suite.suite_inputs`).
"""

from __future__ import annotations

import os
import posixpath
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

#: Callers whose directory listings are the import machinery's, not an input of the code run.
_IMPORT_MACHINERY = ("importlib._bootstrap", "importlib._bootstrap_external", "zipimport", "pkgutil")
#: Callers that read a file or list a directory without running it: source lines shown in a
#: traceback or a warning (``linecache``), and the suite's digest hashing the files of its list
#: (:mod:`vkbench.suite.identity`, run at suite import, before the measured records).
_NOT_INPUTS = frozenset({"linecache", "vkbench.suite.identity"})
#: How many frames above an ``open`` are searched for such a caller (pathlib and io in between).
_CALLER_DEPTH = 6


def tree_path(path: str | os.PathLike[str], roots: Sequence[Path]) -> str | None:
    """``<root name>/<relative path>`` of ``path`` under one of ``roots`` (resolved), or None."""
    resolved = Path(path).resolve()
    for root in roots:
        if resolved.is_relative_to(root):
            return posixpath.join(root.name, resolved.relative_to(root).as_posix())
    return None


def module_files(roots: Sequence[Path], modules: Iterable[ModuleType] | None = None) -> set[str]:
    """Tree paths of the modules (default: all of ``sys.modules``) whose file lies under ``roots``."""
    roots = [Path(r).resolve() for r in roots]
    found = set()
    for module in list(sys.modules.values()) if modules is None else modules:
        path = getattr(module, "__file__", None)
        if path and not path.endswith(".pyc"):
            name = tree_path(path, roots)
            if name:
                found.add(name)
    return found


def _caller(depth: int) -> str:
    """The module name of the frame ``depth`` levels above the audit hook's caller."""
    try:
        return str(sys._getframe(depth + 1).f_globals.get("__name__", ""))
    except ValueError:  # the stack is not that deep
        return ""


class FileRecorder:
    """An audit hook noting the files under ``roots`` that a block of code opens or lists.

    Audit hooks cannot be removed, so one hook per set of roots and process is installed
    (:meth:`installed`) and switched on only inside :meth:`recording`.
    """

    _installed: dict[tuple[Path, ...], FileRecorder] = {}

    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots = tuple(Path(r).resolve() for r in roots)
        self._prefixes = tuple(str(r) for r in self.roots)
        self.active = False
        self.opened: set[str] = set()
        self.listed: set[str] = set()

    @classmethod
    def installed(cls, roots: Sequence[Path]) -> FileRecorder:
        """The process's recorder for ``roots``, its hook added on first use."""
        key = tuple(Path(r).resolve() for r in roots)
        if key not in cls._installed:
            cls._installed[key] = cls(key)
            sys.addaudithook(cls._installed[key]._hook)
        return cls._installed[key]

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active or event not in ("open", "os.listdir", "os.scandir") or not args:
            return
        try:
            path = os.fsdecode(args[0])
        except TypeError:
            return  # a file descriptor
        if not path.startswith(self._prefixes):
            return
        if any(_caller(depth) in _NOT_INPUTS for depth in range(1, _CALLER_DEPTH + 1)):
            return
        if event == "open":
            self.opened.add(path)
        elif _caller(2) not in _IMPORT_MACHINERY:
            self.listed.add(path)

    @contextmanager
    def recording(self) -> Iterator[FileRecorder]:
        self.active = True
        try:
            yield self
        finally:
            self.active = False

    def paths(self) -> tuple[list[str], list[str]]:
        """Files (the trees' modules in ``sys.modules`` and opened non-bytecode files) and the
        directories listed, as tree paths."""
        files = module_files(self.roots)
        files |= {name for p in self.opened if not p.endswith(".pyc") and (name := tree_path(p, self.roots))}
        dirs = {name for p in self.listed if (name := tree_path(p, self.roots))}
        return sorted(files), sorted(dirs - files)
