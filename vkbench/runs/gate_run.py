"""``vkbench gate BASE HEAD``: the verdict on one change, measured on both sides and re-measured.

Two asv processes side by side (:mod:`vkbench.runs.lanes`) measure BASE and HEAD with the tracks
meant to be compared (:data:`vkbench.suite.tiers.COMPARED`: exact counts only, nothing that depends on
load or on a cache) into a scratch results directory, through the ``vkbench upstream`` machinery (the
mirror or a local repository, the aot build); :func:`vkbench.results.verdict.compare` judges the two files.
Any failing row is measured again (both sides again, in fresh processes) and is reported
as confirmed only where the second run gives the same values; the exit status is 1 only for a
confirmed one. Nothing recorded is written.

A side's first measurement is kept beside the asv config (:data:`KEPT`, per machine, commit and
selection) and taken again by the next gate run of that commit while the suite's version of every
benchmark it holds and the base environment's torch are unchanged: gating several PRs on one base
measures the base once. Counts are exact, so a kept side is the value a new run would give; a failing
row is still measured again on both sides, fresh, before it is reported.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from vkbench.results import sidecar, verdict
from vkbench.results.asv_files import read_dir
from vkbench.results.confirmations import asv_name
from vkbench.results.model import ResultFile, ResultSet
from vkbench.runs import benchmark_split
from vkbench.runs.lanes import run_lanes
from vkbench.suite import equivalence, identity
from vkbench.suite.tiers import COMPARED

#: Sides measured by earlier gate runs, beside the asv config: ``KEPT/<machine>/<commit>-<key>/``.
KEPT = ".gate-sides"


@dataclass
class Verdict:
    """What ``vkbench gate`` found: the rows (failing ones re-measured) and the runs behind them."""

    base: str
    head: str
    rows: list[verdict.Row]
    compared: int
    runs: list[str] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)  #: commits whose first measurement was a kept side

    @property
    def confirmed(self) -> list[verdict.Row]:
        return [row for row in verdict.failing(self.rows) if row.confirmed]

    @property
    def exit_status(self) -> int:
        return 1 if self.confirmed else 0


class GateError(RuntimeError):
    """A side could not be measured (asv failed, a commit unknown): one line, exit 2."""


def _side(found: ResultSet, commit: str, log: Path) -> ResultFile:
    files = [f for f in found.files if f.commit.startswith(commit) or commit.startswith(f.commit)]
    if not files:
        tail = log.read_text().strip().splitlines()[-3:] if log.is_file() else []
        raise GateError(f"asv recorded nothing for {commit[:12]}: {' / '.join(tail) or 'no output'}")
    return files[0]


def _measure(source: Path, config: Path, machine: str, commits: list[str], pattern: str, scratch: Path,
             env: Mapping[str, str] | None) -> tuple[list[ResultFile], list[str], list[int]]:
    """Each commit measured by an asv process of its own, side by side (environments of their own)."""
    found, commands, codes = run_lanes(source, config, [[c] for c in commits], machine, scratch, pattern, env)
    sides = [_side(found[lane], commit, scratch / f"lane-{lane}.log") for lane, commit in enumerate(commits)]
    return sides, commands, codes


def kept_folder(config: Path, machine: str, commit: str, pattern: str) -> Path:
    """Where the first measurement of ``commit`` under ``pattern`` is kept: keyed also by the base
    environment's torch and the asv config's text (another stack or build is another measurement)."""
    torch = importlib.metadata.version("torch")
    key = hashlib.sha256("\0".join((pattern, torch, Path(config).read_text())).encode()).hexdigest()[:16]
    return Path(config).parent / KEPT / machine / f"{commit}-{key}"


def versions_now(names: Iterable[str], config: Path) -> dict[str, str]:
    """The asv version each benchmark of ``names`` has now under ``config``: :func:`identity.suite_version`,
    with the ``benchmarks`` tree read from the config's ``benchmark_dir`` (asv imports the suite from there;
    a copy with another grid, as the gate's tests use, is another suite). One digest per module."""
    settings = json.loads(Path(config).read_text())
    bench = Path(settings.get("benchmark_dir") or "benchmarks")
    trees = {**identity.roots(), "benchmarks": bench if bench.is_absolute() else Path(config).parent / bench}
    digests: dict[str, str] = {}
    out = {}
    for name in names:
        module, cls = name.split(".")[:2]
        if module not in digests:
            inputs = identity.inputs_of(module)
            digests[module] = identity.PREFIX + identity.digest(inputs.files, inputs.dirs, trees)
        out[name] = equivalence.kept_version(module, cls, digests[module])
    return out


def kept_side(folder: Path, commit: str, config: Path) -> ResultFile | None:
    """The kept measurement of ``commit`` in ``folder``, if every benchmark it holds still has the
    version the suite gives it now under ``config`` (else it is another suite's, and measured again)."""
    if not folder.is_dir():
        return None
    files = [f for f in read_dir(folder).files if f.commit == commit]
    if len(files) != 1 or not files[0].results:
        return None
    side = files[0]
    now = versions_now(side.results, config)
    return side if all(side.version(name) == version for name, version in now.items()) else None


def keep_side(side: ResultFile, folder: Path) -> None:
    """Keep a side's result file (with its sidecar and asv's listing) for the next gate run."""
    shutil.rmtree(folder, ignore_errors=True)
    target = folder / side.path.parent.name
    target.mkdir(parents=True)
    for path in (side.path, sidecar.path_for(side.path), side.path.parent / "machine.json",
                 side.path.parent.parent / "benchmarks.json"):
        if path.is_file():
            shutil.copy2(path, (folder if path.name == "benchmarks.json" else target) / path.name)


def _first(source: Path, config: Path, machine: str, base: str, head: str, pattern: str, scratch: Path,
           env: Mapping[str, str] | None, fresh: bool
           ) -> tuple[ResultFile, ResultFile, list[str], list[int], list[str]]:
    """The first measurement of both sides: a kept one where it holds (unless ``fresh``), the rest
    measured (side by side) and kept."""
    folders = {commit: kept_folder(config, machine, commit, pattern) for commit in (base, head)}
    kept = {} if fresh else {c: side for c, f in folders.items()
                         if (side := kept_side(f, c, config)) is not None}
    todo = [commit for commit in (base, head) if commit not in kept]
    commands: list[str] = []
    codes: list[int] = []
    if todo:
        sides, commands, codes = _measure(source, config, machine, todo, pattern, scratch, env)
        for commit, side, code in zip(todo, sides, codes, strict=True):
            kept[commit] = side
            if code == 0:
                keep_side(side, folders[commit])
    return kept[base], kept[head], commands, codes, [c for c in (base, head) if c not in todo]


def gate(source: Path, config: Path, base: str, head: str, machine: str = "vkbench-gate",
         env: Mapping[str, str] | None = None, factor: float = verdict.FACTOR,
         pattern: str = COMPARED, fresh: bool = False) -> Verdict:
    """Measure (or take a kept side: :func:`kept_side`; ``fresh`` measures both), judge, re-measure
    what fails; ``source`` is the mirror or a local repository."""
    with tempfile.TemporaryDirectory(prefix="vkbench-gate-") as tmp:
        before, after, commands, codes, reused = _first(source, config, machine, base, head, pattern,
                                                        Path(tmp) / "first", env, fresh)
        names = [name for name in after.results if name in before.results
                 and (re.search(pattern, name) or any(re.search(pattern, asv_name(name, ", ".join(p)))
                                                      for p in after.values(name)))]
        rows = verdict.compare(before, after, names, factor)
        result = Verdict(base, head, rows, sum(len(after.values(n)) for n in names), commands, codes, reused)
        suspects = verdict.failing(rows)
        if suspects:  # both sides again, in fresh processes: only what selects a suspect
            narrower = again(pattern, suspects)
            (before2, after2), commands2, codes2 = _measure(source, config, machine, [base, head], narrower,
                                                            Path(tmp) / "again", env)
            result.runs += commands2
            result.codes += codes2
            repeated = {row.key: row for row in verdict.compare(before2, after2, names, factor)}
            for row in suspects:
                twin = repeated.get(row.key)
                row.confirmed = twin is not None and (twin.before, twin.after) == (row.before, row.after)
    return result


def again(pattern: str, suspects: list[verdict.Row]) -> str:
    """The alternatives of ``pattern`` that select a suspect row: what is measured again. A net phase's
    other phases are points of the same benchmark, so they come along; a changed partitioning's row
    is confirmed by its own counts."""
    kept = [alternative for alternative in benchmark_split.alternatives(pattern)
            if any(re.search(alternative, asv_name(row.benchmark, row.point)) for row in suspects)]
    return "|".join(kept) or pattern


def selection(policies: bool) -> str:
    """What is compared: :data:`COMPARED`, without the fast policies' coverage unless ``policies`` (their
    records take ~2.5 min a side on 2 cores; the daily recording compares them)."""
    if policies:
        return COMPARED
    kept = benchmark_split.alternatives(COMPARED)
    return "|".join(a for a in kept if not a.startswith(r"^bench_policies\."))


def repro(base: str, head: str, source: Path, mirror: bool) -> str:
    where = f"--mirror {source}" if mirror else f"--repo {source}"
    return f"vkbench gate {base} {head} {where}"


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
