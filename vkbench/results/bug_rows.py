"""The bug list: every distinct failure vkbench records, in a form someone can act on without vkbench.

A *row* is one failure (a stage and an error) with what it blocks, who would fix it, the probe that
tracks it per commit and a standalone reproducer (``repro/<id>.py``: torch and executorch only).
What does not change with the data is written once, in ``bugs.toml`` (read by
:mod:`vkbench.results.bug_knowledge`); this module computes the rest from what is recorded
(:class:`~vkbench.results.records.Recorded`) every time:

* the entries a lowering failure blocks, from the newest policy survey (a blocked entry's stage and
  error; ``default_blocker`` for entries lowered only with a non-Core-ATen op let through;
  ``blocked_with_allowed`` for what blocks them after that), matched by each row's ``pattern``;
* the coverage a workaround reaches (an entry's rewrite, or the entry itself with the op let through);
* the entries a runtime failure stops, checked against the ladder (``results/releases``: an entry
  listed for a load error must stop at load there), plus each entry whose stored runtime error line
  (:func:`~vkbench.results.ladder.stop_reasons`) the row's ``pattern`` finds; every runtime row carries
  the stored lines of its entries and its probe (``error_lines``). An entry the ladder stops at load
  that no row claims gets a row of its own keyed by its stored line (owner ``not classified``), or,
  where no line was stored, lands in the knowledge's ``unrecorded_load`` row;
* ``first_bad``/``fixed_in``, from the probe's per-commit record (:mod:`vkbench.results.probe_history`);
  a runtime row left empty there is dated by its probe's runtime ladder in ``results/upstream``
  (``ProbeLadder``, ordered by the runtime classes, ``results/history/classes-runtime.json``): "before
  <range start>" / "open at <newest>" where the failure holds at an end, a class's first commit where
  two recorded neighbouring classes differ, ``A..B (bisect)`` where recorded commits are further apart;
  a runtime row with no probe, by its reproducer's runs with upstream commits' runtimes
  (``results/bugs/upstream``, :func:`reproducer_dates`), in the same order and the same words;
  :func:`runtime_summary` says what those dates amount to over the runtime rows (how many predate the
  range, how many are open at the newest recorded runtime commit, how many commits the history holds);
* a row whose fix is on a release branch only (``fix_branch = "release"``: main lacks it) says both:
  ``fixed in <release> (v<version>, release branch); open on main at <newest main commit>``, main's
  state read from the probe's record on the main line (``open_on_main``).

A *performance* row (``kind = "performance"``: nothing fails, a stage does needless work) blocks no
entry; its first bad and fixed-in commits are stated in ``bugs.toml`` (checked in the ExecuTorch
history), and its ``what_if`` holds the medians of its measured what-if, per size
(:func:`vkbench.results.pattern_cache.row_what_if` of the file its ``measured`` names).

A blocked entry that matches no row gets a row of its own, keyed by its stage and failure key
(:mod:`vkbench.results.failure_key`, the key ``vkbench changes`` reads too; owner ``not classified``),
so a new failure shows up here before anyone writes its row.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vkbench.commits.classes import Classes
from vkbench.paths import RESULTS_ROOT, ROOT
from vkbench.results.bug_knowledge import (
    FAILURE,
    KINDS,
    LOWERING_STAGES,
    NOT_CLASSIFIED,
    OWNERS,
    PERFORMANCE,
    RUNTIME_STAGES,
    UPSTREAM,
    Bug,
    knowledge,
)
from vkbench.results.failure_key import block_key
from vkbench.results.ladder import probe_rungs_by_commit, rungs_reached, stop_reasons
from vkbench.results.model import Failure
from vkbench.results.pattern_cache import row_what_if
from vkbench.results.probe_history import HistoryPoint, history_range, is_bad, probe_history
from vkbench.results.records import Recorded, read_recorded
from vkbench.results.repro_runs import ReproRecord, ReproRun
from vkbench.suite import catalogue

Rungs = dict[str, dict[str, str]]  #: entry -> "machine (runner)" -> rung reached
Reasons = dict[str, dict[str, Failure]]  #: entry -> "machine (runner)" -> the stored runtime failure


@dataclass
class BugRow:
    """One row of the bug list: a :class:`~vkbench.results.bug_knowledge.Bug`'s facts plus what the
    results say about it."""

    id: str
    stage: str
    error: str
    owner: str
    entries: list[str]
    probe: str
    repro: str
    first_bad: str = ""
    fixed_in: str = ""
    last_good: str = ""
    history: str = ""
    build: str = ""
    note: str = ""
    what_if: list[dict[str, Any]] = field(default_factory=list)
    probe_rungs: dict[str, str] = field(default_factory=dict)
    #: Per machine record (``results/bugs/repro-runs-*.json``): did the reproducer show it, and the line.
    repro_runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Entry (or ``probe/<name>``) -> "machine (runner)" (`` at <commit>`` for upstream results) -> the
    #: runtime's error line the ladder stored.
    error_lines: dict[str, dict[str, str]] = field(default_factory=dict)
    #: ``failure`` or ``performance`` (:data:`~vkbench.results.bug_knowledge.KINDS`).
    kind: str = FAILURE
    #: ``release`` where the fix is on a release branch only (``bugs.toml``), else "".
    fix_branch: str = ""
    #: The newest main-line commit whose record still shows the failure, for a ``fix_branch`` row whose
    #: newest main commit is bad ("" otherwise).
    open_on_main: str = ""

    @property
    def upstream(self) -> bool:
        """Owned by ExecuTorch or torch: must carry a probe and a reproducer."""
        return self.owner in UPSTREAM

    @property
    def repro_agree(self) -> bool | None:
        """Whether the reproducer did the same (reproduced or not) on every machine whose run could tell
        (None below two such machines): lavapipe and an NVIDIA GPU agreeing puts the failure in
        ExecuTorch, not a driver. A run that could not tell (:attr:`ReproRun.judged`) neither agrees nor
        disagrees."""
        seen = [run["reproduced"] for run in self.repro_runs.values() if run.get("judged", True)]
        return None if len(seen) < 2 else len(set(seen)) == 1

    def to_json(self) -> dict[str, Any]:
        """The keys ``vkbench bugs --json`` promises first, then the rest."""
        return {"id": self.id, "stage": self.stage, "error": self.error, "owner": self.owner,
                "entries": self.entries, "probe": self.probe, "repro": self.repro,
                "first_bad": self.first_bad, "fixed_in": self.fixed_in, "kind": self.kind,
                "last_good": self.last_good,
                "history": self.history, "build": self.build, "note": self.note, "what_if": self.what_if,
                "probe_rungs": self.probe_rungs, "repro_runs": self.repro_runs,
                "repro_agree": self.repro_agree, "error_lines": self.error_lines,
                "fix_branch": self.fix_branch, "open_on_main": self.open_on_main}


# -- the survey's blocks ------------------------------------------------------------------------------

def _blocks(row: dict[str, Any]) -> list[str]:
    """Every recorded block of one policy row, as ``stage: Type: message``."""
    found = []
    if row.get("status") != "lowered" and row.get("stage"):
        found.append(f"{row['stage']}: {row.get('error_type', '')}: {row.get('error', '')}")
    found += [row[key] for key in ("default_blocker", "blocked_with_allowed") if row.get(key)]
    return found


def _matches(bug: Bug, entry: str, block: str) -> bool:
    """Does the row's pattern find the block (as recorded: the patterns are written against it)?"""
    if bug.stage in RUNTIME_STAGES or not bug.pattern or (bug.only and entry not in bug.only):
        return False
    return bool(re.search(bug.pattern, block))


def _coverage(row: dict[str, Any] | None, entry: str) -> dict[str, Any]:
    if row is None:
        return {"entry": entry, "status": "not recorded"}
    coverage = row.get("coverage") or {}
    if row.get("status") != "lowered" or not coverage:
        return {"entry": entry, "status": f"blocked at {row.get('stage', '?')}: {row.get('error_type', '')}"}
    return {"entry": entry, "status": "lowered", "cpu_percent": coverage.get("cpu_percent"),
            "nodes_cpu": coverage.get("nodes_cpu"), "nodes_total": coverage.get("nodes_total"),
            "vulkan_programs": coverage.get("vulkan_programs"),
            "allowed_on_cpu": list(row.get("allowed_on_cpu") or [])}


# -- the ladder ---------------------------------------------------------------------------------------

def _stops_at_load(rungs: dict[str, str]) -> bool:
    return bool(rungs) and all(rung == "lowered" for rung in rungs.values())


def _stored_match(bug: Bug, reasons: dict[str, Failure]) -> bool:
    """Does the runtime row's pattern find a line the ladder stored for the entry, at the row's stage?"""
    return bool(bug.pattern) and any(failure.stage == bug.stage and re.search(bug.pattern, failure.error)
                                     for failure in reasons.values())


def _error_lines(workloads: list[str], reasons: Reasons) -> dict[str, dict[str, str]]:
    return {w: {where: f"{f.stage}: {f.error}" for where, f in sorted(reasons[w].items())}
            for w in workloads if reasons.get(w)}


#: Rungs past where a runtime row stops: a point there no longer shows the row's failure.
_PAST = {"load": ("loads", "runs", "matches"), "run": ("matches",)}
_STOP = {"load": "lowered", "run": "runs"}


def runtime_dates(stage: str, by_commit: dict[str, dict[str, str]],
                  classes: Classes | None) -> tuple[str, str, str]:
    """``(first_bad, fixed_in, summary)`` of a runtime row from its probe's upstream ladder points.

    A commit is bad where every recorded rung stops at the row's stage, good where every one is past
    it; others (not lowered, machines disagreeing) say nothing."""
    verdicts = {commit: (True if all(r == _STOP[stage] for r in rungs.values())
                         else False if all(r in _PAST[stage] for r in rungs.values()) else None)
                for commit, rungs in by_commit.items()}
    machines = sorted({m for rungs in by_commit.values() for m in rungs})
    return dated(verdicts, classes, f"runtime ({', '.join(machines)}): stops at {stage}",
                 f"runtime: past {stage}")


def reproducer_dates(name: str, records: list[ReproRecord],
                     classes: Classes | None) -> tuple[str, str, str]:
    """``(first_bad, fixed_in, summary)`` of a runtime row from its reproducer's runs by upstream commits'
    runtimes (``results/bugs/upstream``): bad where it reproduced on every machine, good where it ran
    clean (exit 0, the failure not printed, the run able to tell) on every one; others say nothing."""
    runs: dict[str, dict[str, ReproRun]] = {}
    for record in records:
        if record.commit and name in record.runs:
            runs.setdefault(record.commit, {})[record.machine] = record.runs[name]
    verdicts = {commit: (True if all(r.reproduced for r in found.values())
                         else False if all(r.clean for r in found.values()) else None)
                for commit, found in runs.items()}
    machines = sorted({m for found in runs.values() for m in found})
    return dated(verdicts, classes, f"reproducer ({', '.join(machines)}): reproduced",
                 "reproducer: not reproduced")


def dated(verdicts: dict[str, bool | None], classes: Classes | None, bad_is: str,
          good_is: str) -> tuple[str, str, str]:
    """``(first_bad, fixed_in, summary)`` from commit -> bad (True), good (False) or says nothing (None).

    Commits go in runtime-class order; the range's base (``A`` of ``A..B``) comes first. "before <base>"
    / "open at <newest>" where the failure holds at an end, a class's first commit where two recorded
    neighbouring classes differ, ``A..B (bisect)`` where recorded commits are further apart."""
    if classes is None or not verdicts:
        return "", "", ""
    base = classes.range.split("..")[0]
    position = {c: i for i, k in enumerate(classes.classes) for c in k.commits}
    points = []
    for commit, bad_here in verdicts.items():
        index = -1 if commit.startswith(base) else position.get(commit)
        if index is not None and bad_here is not None:
            points.append((index, commit, bad_here))
    points.sort()
    bad = [i for i, point in enumerate(points) if point[2]]
    if not bad:
        return "", "", f"{good_is} on the {len(points)} recorded commits" if points else ""

    def step(before: tuple[int, str, bool], after: tuple[int, str, bool]) -> str:
        if after[0] == before[0] + 1 and after[0] >= 0:
            return classes.classes[after[0]].first[:8]
        return f"{before[1][:8]}..{after[1][:8]} (bisect)"

    last = bad[-1]
    start = last
    while start > 0 and points[start - 1][2]:
        start -= 1
    oldest = points[start][1]
    first_bad = (step(points[start - 1], points[start]) if start > 0
                 else f"before {base[:8]}" if oldest.startswith(base) else f"at or before {oldest[:8]}")
    fixed_in = (step(points[last], points[last + 1]) if last + 1 < len(points)
                else f"open at {points[last][1][:8]}")
    return first_bad, fixed_in, f"{bad_is} on {len(bad)} of {len(points)} recorded commits"


@dataclass(frozen=True)
class RuntimeDates:
    """What the runtime rows' dates amount to, given how few runtime commits are recorded: the rows whose
    first bad is "before <range start>" (the failure holds at the range's base), those "open at" the
    newest recorded runtime commit, and the commits the runtime history holds (probe ladders in
    ``results/upstream`` and reproducer runs in ``results/bugs/upstream`` on the runtime classes' line)."""

    rows: tuple[str, ...]  #: ids of the runtime rows (stage load or run)
    predating: tuple[str, ...]  #: those whose first bad is "before <range start>"
    open_at_newest: tuple[str, ...]  #: those whose fixed-in is "open at <newest>"
    range: str = ""  #: the runtime classes' range, ``A..B`` ("" when none is stored)
    classes: int = 0  #: how many runtime classes the range has
    commits: tuple[str, ...] = ()  #: the recorded runtime commits on the line, oldest first (8 digits)
    ladder_commits: int = 0  #: of ``commits``, those with a probe's runtime ladder point
    reproducer_commits: int = 0  #: of ``commits``, those a reproducer ran on

    @property
    def range_start(self) -> str:
        return self.range.split("..")[0][:8]

    @property
    def newest(self) -> str:
        """The newest recorded runtime commit ("" when none is)."""
        return self.commits[-1] if self.commits else ""

    def sentence(self) -> str:
        """README's and ``bugs.html``'s words for it."""
        if not self.commits:
            return (f"{len(self.predating)} of {len(self.rows)} runtime rows predate the range; the runtime "
                    "history holds no recorded runtime commit")
        return (f"{len(self.predating)} of {len(self.rows)} runtime rows predate the range; "
                f"{len(self.open_at_newest)} are open at {self.newest}; the runtime history holds "
                f"{len(self.commits)} recorded runtime commits")

    def to_json(self) -> dict[str, Any]:
        return {"rows": len(self.rows), "predate_range": len(self.predating), "range_start": self.range_start,
                "open_at_newest": len(self.open_at_newest), "newest_commit": self.newest,
                "recorded_commits": len(self.commits), "ladder_commits": self.ladder_commits,
                "reproducer_commits": self.reproducer_commits, "range": self.range,
                "runtime_classes": self.classes, "commits": list(self.commits),
                "rows_predating": list(self.predating), "rows_open_at_newest": list(self.open_at_newest),
                "sentence": self.sentence()}


def runtime_commits(recorded: Recorded) -> tuple[list[str], set[str], set[str]]:
    """``(commits, ladder, reproducer)``: the runtime history's recorded commits on the runtime classes'
    line (the range's base first, then by class and place in it; full hashes), and which of them hold a
    probe's runtime ladder point (``ProbeLadder``) or a reproducer's run. Commits off the line (releases)
    are left out: the dates never use them."""
    classes = recorded.runtime_classes
    if classes is None:
        return [], set(), set()
    ladder = {record.commit for record in recorded.upstream.files
              if any(point.value is not None and len(point.params) == 2
                     and point.params[0].startswith("probe/")
                     for point in record.points(catalogue.PROBE_LADDER.name))}
    reproducer = {record.commit for record in recorded.repro_history if record.commit}
    base = classes.range.split("..")[0]
    place = {c: (i, j) for i, k in enumerate(classes.classes) for j, c in enumerate(k.commits)}
    placed = sorted(((-1, 0) if commit.startswith(base) else place[commit], commit)
                    for commit in ladder | reproducer if commit.startswith(base) or commit in place)
    commits = [commit for _, commit in placed]
    return commits, ladder & set(commits), reproducer & set(commits)


def runtime_summary(rows: list[BugRow], recorded: Recorded) -> RuntimeDates:
    """:class:`RuntimeDates` of ``rows``' runtime rows over ``recorded``'s runtime history."""
    runtime = [row for row in rows if row.stage in RUNTIME_STAGES]
    commits, ladder, reproducer = runtime_commits(recorded)
    classes = recorded.runtime_classes
    start = classes.range.split("..")[0][:8] if classes else ""
    newest = commits[-1][:8] if commits else ""
    return RuntimeDates(tuple(row.id for row in runtime),
                        tuple(row.id for row in runtime if start and row.first_bad == f"before {start}"),
                        tuple(row.id for row in runtime if newest and row.fixed_in == f"open at {newest}"),
                        classes.range if classes else "", len(classes.classes) if classes else 0,
                        tuple(commit[:8] for commit in commits), len(ladder), len(reproducer))


def _still_stops(stage: str, rungs: dict[str, str]) -> bool:
    """Whether the ladder still stops an entry where a runtime row says (True when it holds no rung)."""
    if not rungs:
        return True
    return _stops_at_load(rungs) if stage == "load" else all(rung == "runs" for rung in rungs.values())


# -- the rows -----------------------------------------------------------------------------------------

def bug_rows(results: Recorded | Path = RESULTS_ROOT) -> list[BugRow]:
    """Every row, in ``bugs.toml`` order, then the unrecorded load failures and unclassified blocks.

    ``results``: what :func:`~vkbench.results.records.read_recorded` read, or the folder to read it from.
    """
    recorded = results if isinstance(results, Recorded) else read_recorded(Path(results))
    known = knowledge()
    policy = {row["entry"]: row for row in (recorded.survey.rows if recorded.survey else [])}
    rungs = rungs_reached(recorded.releases)
    reasons = stop_reasons(recorded.releases)  # what claims a stuck entry: the ladder of the releases
    upstream = stop_reasons(recorded.upstream, at_commit=True)
    lines = {entry: {**reasons.get(entry, {}), **upstream.get(entry, {})} for entry in {*reasons, *upstream}}
    stuck = sorted(e for e, r in rungs.items() if not e.startswith("probe/") and _stops_at_load(r))
    rows: list[BugRow] = []
    claimed: set[str] = set()
    unmatched = {entry: blocks for entry, row in policy.items() if (blocks := _blocks(row))}
    for bug in known.bugs:
        if bug.kind == PERFORMANCE:  # blocks nothing; its what-if is a measurement of its own
            entries = []
            what_if = row_what_if(recorded.root / bug.measured) if bug.measured else []
        elif bug.stage in RUNTIME_STAGES:
            entries = [e for e in bug.recorded if _still_stops(bug.stage, rungs.get(e, {}))]
            entries += [e for e in stuck if e not in claimed and e not in entries
                        and _stored_match(bug, reasons.get(e, {}))]
            claimed.update(entries)
            what_if: list[dict[str, Any]] = []
        else:
            entries = [entry for entry, blocks in policy.items()
                       if any(_matches(bug, entry, block) for block in _blocks(policy[entry]))]
            for entry in entries:
                unmatched[entry] = [b for b in unmatched.get(entry, []) if not _matches(bug, entry, b)]
            lowered_with_op = [e for e in entries if policy[e].get("status") == "lowered"]
            what_if = [_coverage(policy.get(e), e) for e in (*bug.workarounds, *lowered_with_op)]
        rows.append(_row(bug, entries, what_if, rungs, recorded, lines))
    stored: dict[tuple[str, str], list[str]] = {}
    for entry in (e for e in stuck if e not in claimed and reasons.get(e)):
        failure = reasons[entry][min(reasons[entry])]
        stored.setdefault((failure.stage, failure.error), []).append(entry)
    for index, ((stage, error), entries) in enumerate(sorted(stored.items()), start=1):
        rows.append(BugRow(f"load_unclassified_{index}", "load", f"{stage}: {error}", NOT_CLASSIFIED, entries,
                           "", "", note="no runtime row of vkbench/results/bugs.toml matches this stored "
                                        "error line yet", error_lines=_error_lines(entries, lines)))
    unrecorded = [e for e in stuck if e not in claimed and not reasons.get(e)]
    if unrecorded:
        rows.append(_row(known.unrecorded_load, unrecorded, [], rungs, recorded, lines))
    groups: dict[tuple[str, str], list[str]] = {}
    for entry, blocks in unmatched.items():
        for block in blocks:
            groups.setdefault(block_key(block), []).append(entry)
    for index, ((stage, error), entries) in enumerate(sorted(groups.items()), start=1):
        rows.append(BugRow(f"{stage}_unclassified_{index}", stage, error, NOT_CLASSIFIED, entries, "", "",
                           note="no entry of vkbench/results/bugs.toml matches this recorded block yet"))
    return rows


def _repro_runs(bug: Bug, runs: list[ReproRecord]) -> dict[str, dict[str, Any]]:
    """Machine -> what the row's reproducer printed on that machine's build."""
    name = Path(bug.repro).stem if bug.repro else ""
    found = {}
    for record in runs:
        if name not in record.runs:
            continue
        run = record.runs[name]
        build = {**record.build, **run.build}  # a run added later says where its build differs
        found[record.machine] = {"reproduced": run.reproduced, "judged": run.judged, "rc": run.rc,
                                 "line": run.line,
                                 "date": run.date or record.date,
                                 "executorch": build.get("git_version") or build.get("executorch", ""),
                                 "torch": build.get("torch", ""), "runner": build.get("runner", "")}
    return found


def _filled(found: tuple[str, str, str], dates: tuple[str, str, str]) -> tuple[str, str, str]:
    """``(first_bad, fixed_in, summary)``: the dates ``found`` lacks, from ``dates``; summaries joined."""
    summary = "; ".join(part for part in (found[2], dates[2]) if part)
    return found[0] or dates[0], found[1] or dates[1], summary


def branch_fix(fixed_in: str, points: list[HistoryPoint], how: str) -> tuple[str, str]:
    """``(fixed_in, open_on_main)`` of a row whose fix is on a release branch only: the release's label
    marked ``release branch``, then where main stands at its newest recorded commit (``open on main at
    <commit>`` where that commit is still bad, ``good on main at <commit>`` where it is not)."""
    if not fixed_in:
        return fixed_in, ""
    marked = f"{fixed_in[:-1]}, release branch)" if fixed_in.endswith(")") else f"{fixed_in} (release branch)"
    main = [point for point in points if point.main]
    if how == "whole":  # as history_range: a flag without CPU ops says nothing
        main = [p for p in main if p.failed or p.cpu_ops is not None]
    if not main:
        return f"{marked}; main not recorded", ""
    newest = main[-1]
    if is_bad(newest, how):
        return f"{marked}; open on main at {newest.label}", newest.label
    return f"{marked}; good on main at {newest.label}", ""


def _row(bug: Bug, entries: list[str], what_if: list[dict[str, Any]], rungs: Rungs,
         recorded: Recorded, reasons: Reasons) -> BugRow:
    first_bad = fixed_in = last_good = summary = open_on_main = ""
    if bug.kind == PERFORMANCE:
        first_bad, fixed_in = bug.first_bad, bug.fixed_in
        summary = "stated in vkbench/results/bugs.toml, checked in the ExecuTorch history"
    if bug.probe and bug.history:
        points = probe_history(bug.probe, recorded)
        first_bad, fixed_in, last_good, summary = history_range(points, bug.history)
        if bug.fix_branch == "release":
            fixed_in, open_on_main = branch_fix(fixed_in, points, bug.history)
    if bug.stage in RUNTIME_STAGES:  # the probe's runtime ladder; where a date stays open, the reproducer's
        found = (first_bad, fixed_in, summary)
        if bug.probe:
            ladder = probe_rungs_by_commit(bug.probe, recorded.upstream)
            found = _filled(found, runtime_dates(bug.stage, ladder, recorded.runtime_classes))
        if bug.repro and not (found[0] and found[1]):
            found = _filled(found, reproducer_dates(Path(bug.repro).stem, recorded.repro_history,
                                                    recorded.runtime_classes))
        first_bad, fixed_in, summary = found
    return BugRow(bug.id, bug.stage, bug.error, bug.owner, entries, bug.probe, bug.repro, first_bad, fixed_in,
                  last_good, summary, bug.needs if bug.repro else "", bug.note, what_if,
                  dict(sorted(rungs.get(f"probe/{bug.probe}", {}).items())) if bug.probe else {},
                  _repro_runs(bug, recorded.repro_runs),
                  _error_lines([*entries, f"probe/{bug.probe}"] if bug.probe else entries, reasons)
                  if bug.stage in RUNTIME_STAGES else {}, bug.kind, bug.fix_branch, open_on_main)


def owner_counts(rows: list[BugRow]) -> dict[str, int]:
    """Rows per owner, in :data:`~vkbench.results.bug_knowledge.OWNERS` order (owners without a row left
    out)."""
    counts = Counter(row.owner for row in rows)
    return {owner: counts[owner] for owner in OWNERS if counts[owner]}


def repro_path(row: BugRow) -> Path | None:
    """The reproducer's file in this checkout (None when the row has none)."""
    return ROOT / row.repro if row.repro else None


__all__ = ["KINDS", "LOWERING_STAGES", "NOT_CLASSIFIED", "OWNERS", "PERFORMANCE", "RUNTIME_STAGES",
           "UPSTREAM", "BugRow", "HistoryPoint", "RuntimeDates", "bug_rows", "history_range", "owner_counts",
           "repro_path", "runtime_summary"]
