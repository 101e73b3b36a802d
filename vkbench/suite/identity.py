"""The suite's identity: a digest of the vkbench code a benchmark module's records run, as its asv version.

asv starts a new series when a benchmark's ``version`` changes, and never compares results of
two versions (``asv publish``/``compare``/``continuous`` skip a stored result whose version is not
the benchmark's current one). Its default version hashes the benchmark's own source only, so a
change of vkbench's lowering code (a retry added, a workload rebuilt) used to read as a step of
ExecuTorch. Each module of ``benchmarks/`` therefore sets ``version = suite_version(__name__)``
(``benchmarks/common.py``): :data:`PREFIX` and a digest over (path, content) of the files its
records read.

Which files those are is measured, not guessed (:mod:`vkbench.suite.suite_inputs` runs each module's
records in a fresh process under an audit hook) and stored in ``results/history/suite-inputs.json``
(:class:`SuiteInputs`, read and written only here). Computing the digest at suite import reads
those files' bytes (milliseconds). A module the stored list lacks gets a digest over every file of
both trees: never a false "same suite", at the price of a new series on any edit.

Files are named ``vkbench/...`` and ``benchmarks/...`` (:mod:`vkbench.suite.reads`); they are read
from the ``vkbench`` package running this code and from the ``benchmarks`` package asv imported.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vkbench.paths import RESULTS_ROOT, ROOT
from vkbench.suite import equivalence
from vkbench.suite.documents import read_document, write_document

SCHEMA = 1
#: Where the measured lists live (``vkbench history suite-inputs`` writes them).
PATH = RESULTS_ROOT / "history" / "suite-inputs.json"
#: What a digest-bearing asv ``version`` starts with; asv's own default is a bare sha256 of source.
PREFIX = "suite-"


@dataclass
class ModuleInputs:
    """What one benchmark module's records read of vkbench and ``benchmarks/``."""

    files: list[str]  #: ``vkbench/core/lowering.py``, ``benchmarks/common.py``, ...
    dirs: list[str] = field(default_factory=list)  #: directories its code listed
    ran: str = ""  #: what the measurement ran (the benchmarks and points, or "import only")
    seconds: float = 0.0  #: what measuring it cost (wall, its child process)

    def to_json(self) -> dict[str, Any]:
        return {"files": self.files, "dirs": self.dirs, "ran": self.ran, "seconds": self.seconds}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModuleInputs:
        return cls([str(f) for f in data["files"]], [str(d) for d in data.get("dirs") or []],
                   str(data.get("ran") or ""), float(data.get("seconds") or 0.0))


@dataclass
class SuiteInputs:
    """Per benchmark module (``bench_probes``), the files its records read; and how it was measured."""

    modules: dict[str, ModuleInputs]
    measured_with: str = ""  #: python, torch and executorch of the measuring environment, widenings

    def to_json(self) -> dict[str, Any]:
        return {"vkbench_suite_inputs": SCHEMA, "measured_with": self.measured_with,
                "modules": {name: m.to_json() for name, m in sorted(self.modules.items())}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SuiteInputs:
        if data.get("vkbench_suite_inputs") != SCHEMA:
            raise ValueError(f"not a vkbench suite-inputs file (vkbench_suite_inputs != {SCHEMA})")
        return cls({str(k): ModuleInputs.from_json(v) for k, v in data["modules"].items()},
                   str(data.get("measured_with") or ""))

    @classmethod
    def read(cls, path: Path = PATH) -> SuiteInputs:
        return read_document(path, cls.from_json)

    def write(self, path: Path = PATH) -> Path:
        return write_document(path, self.to_json())

    def listed(self) -> set[str]:
        """Every file some module's list names."""
        return {f for m in self.modules.values() for f in m.files}

    def widen(self, reads: dict[str, set[str]], exists: set[str]) -> tuple[SuiteInputs, dict[str, list[str]]]:
        """These lists plus the files recordings noted outside them (``module -> files``), as
        ``vkbench.commits.fingerprint.widen`` does for ExecuTorch; only files in ``exists`` (the
        checkout's) are added, so a file deleted since is not listed again. Returns the widened
        lists and, per module, what was added."""
        added = {name: sorted((files & exists) - set(self.modules[name].files))
                 for name, files in reads.items() if name in self.modules}
        added = {name: files for name, files in added.items() if files}
        if not added:
            return self, {}
        modules = {name: ModuleInputs(sorted({*m.files, *added.get(name, [])}), m.dirs, m.ran, m.seconds)
                   for name, m in self.modules.items()}
        note = f"{self.measured_with}; + files recordings read in {', '.join(sorted(added))}".strip("; ")
        return SuiteInputs(modules, note), added


def roots() -> dict[str, Path]:
    """``tree name -> directory``: this ``vkbench`` package, and the ``benchmarks`` package asv
    imported (the checkout's when none is imported yet)."""
    imported = getattr(sys.modules.get("benchmarks"), "__file__", None)
    benchmarks = Path(imported).resolve().parent if imported else ROOT / "benchmarks"
    return {"vkbench": Path(__file__).resolve().parents[1], "benchmarks": benchmarks}


def tree_files(trees: dict[str, Path]) -> set[str]:
    """Every file of the trees (bytecode caches left out): what a module the list lacks depends on."""
    return {f"{name}/{p.relative_to(root).as_posix()}" for name, root in trees.items()
            for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def digest(files: Iterable[str], dirs: Iterable[str] = (), trees: dict[str, Path] | None = None) -> str:
    """16 hex digits over each file's path and content (``-`` when absent) and each directory's
    listing: any byte of a listed file changing changes it, a file outside the list cannot."""
    trees = trees or roots()

    def where(name: str) -> Path:
        tree, _, rest = name.partition("/")
        return trees[tree] / rest if tree in trees else Path("/nonexistent") / name

    parts: list[list[str]] = []
    for name in sorted(set(files)):
        try:
            parts.append([name, hashlib.sha256(where(name).read_bytes()).hexdigest()])
        except OSError:
            parts.append([name, "-"])
    for name in sorted(set(dirs)):  # bytecode caches come and go with imports: not part of a listing
        listing = sorted(p.name for p in where(name).iterdir() if p.name != "__pycache__") \
            if where(name).is_dir() else ["-"]
        parts.append([name + "/", *listing])
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


@functools.cache
def stored() -> SuiteInputs | None:
    """The committed lists, read once per process; None (said once on stderr) when unreadable."""
    try:
        return SuiteInputs.read(PATH)
    except ValueError as error:
        print(f"vkbench: {error}; each benchmark's version covers every vkbench file", file=sys.stderr)
        return None


def module_name(name: str) -> str:
    """``bench_probes`` of ``benchmarks.bench_probes`` (asv's name of a benchmark module)."""
    return name.rpartition(".")[2]


def inputs_of(module: str) -> ModuleInputs:
    """The stored list of ``module``; every file of both trees when it has none."""
    lists = stored()
    if lists is not None and module in lists.modules:
        return lists.modules[module]
    if lists is not None:
        print(f"vkbench: {module} is not in {PATH.name} (run `vkbench history suite-inputs`); "
              "its version covers every vkbench file", file=sys.stderr)
    return ModuleInputs(sorted(tree_files(roots())), ran="unmeasured: every file of both trees")


def current_digest(name: str) -> str:
    """:data:`PREFIX` and the digest of the files module ``name``'s records read, as they are now."""
    inputs = inputs_of(module_name(name))
    return PREFIX + digest(inputs.files, inputs.dirs)


def suite_version(name: str, cls: str | None = None) -> str:
    """The asv ``version`` of class ``cls`` of benchmark module ``name`` (``__name__``; None: the
    module's own): :func:`current_digest`, or the older digest an equivalence record keeps that
    class under (:mod:`vkbench.suite.equivalence`: its counts re-measured equal)."""
    return equivalence.kept_version(module_name(name), cls, current_digest(name))


def carries_digest(version: str | None) -> bool:
    """Whether a stored asv version is a suite digest (recorded since the suite's identity existed);
    older results carry asv's source hash of the benchmark alone, or nothing."""
    return bool(version) and str(version).startswith(PREFIX)


def unlisted(module: str, imported: set[str], since_fork: set[str]) -> set[str]:
    """Files a process running ``module``'s records imported that the stored lists do not account
    for: those imported since the process was forked from asv's server (by this module's records)
    that its own list lacks, and any file no module's list names (a new import at suite import).

    A spawned process (no fork) passes everything it imported as ``since_fork``.
    """
    lists = stored()
    if lists is None:
        return set()
    own = set(lists.modules[module].files) if module in lists.modules else set()
    return (since_fork - own) | (imported - lists.listed())
