"""Events: the changes table told once per commit.

A commit such as ``76d6b1e5`` (#20383) moves fifteen rows at once: nine VLA entries fail with the same
300-character ``flatc`` line, a probe fails with it too, and five counts of VQ-BeT improve. Row by row
that reads as fifteen findings with one reason repeated; an :class:`~vkbench.results.changes.Event`
tells it once: the commit, its subject and PR, the lowering inputs its class changed, every affected
benchmark and entry with before -> after, each distinct reason once, what the stored re-measurements
of both sides say, and one command reproducing all of it. Regressing events come first.

Release tags sit off the first-parent line (v1.3.x branched from main before v1.4.0 did), so a step
between two tags is a range that repeats main-line events. :func:`explain` places each such step on
the main-line event it repeats (same benchmark and parameter stepping the same way on a main-line
commit between the two tags' bases, from :class:`ReleaseBases`); a step it cannot place stays an
event of the release line with the note "not placed: record main-line commits between X and Y".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vkbench import git
from vkbench.commits.classes import Classes
from vkbench.paths import RESULTS_ROOT
from vkbench.results.changes import (
    FAILED,
    LADDER_NAMES,
    OLDER,
    SAME,
    Change,
    Changes,
    Event,
    _points,
    changes,
    lines,
    repro,
)
from vkbench.results.confirmations import Stored
from vkbench.results.model import ResultSet
from vkbench.results.runtime_timeline import runtime_repro, runtime_steps
from vkbench.suite import catalogue
from vkbench.suite.documents import read_document, write_document

#: Where the release tags' bases are kept (``vkbench history bases`` writes them from a mirror).
BASES_PATH = RESULTS_ROOT / "history" / "release-bases.json"
BASES_SCHEMA = 1
#: The main line the tags are compared with.
MAIN = "refs/heads/main"


@dataclass
class ReleaseBases:
    """Per recorded release commit, its tag and the main-line commit its branch left from
    (``git merge-base <tag> main``): what a release step's main-line window is."""

    bases: dict[str, dict[str, str]]  #: release commit -> {"tag": "v1.4.0", "base": main commit}

    def base(self, commit: str) -> str | None:
        found = self.bases.get(commit)
        return found["base"] if found else None

    def tag(self, commit: str) -> str | None:
        found = self.bases.get(commit)
        return found["tag"] if found else None

    def to_json(self) -> dict[str, Any]:
        return {"vkbench_release_bases": BASES_SCHEMA, "bases": dict(sorted(self.bases.items()))}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReleaseBases:
        if data.get("vkbench_release_bases") != BASES_SCHEMA:
            raise ValueError(f"not a vkbench release-bases file (vkbench_release_bases != {BASES_SCHEMA})")
        return cls({str(k): {"tag": str(v["tag"]), "base": str(v["base"])} for k, v in data["bases"].items()})

    @classmethod
    def read(cls, path: Path = BASES_PATH) -> ReleaseBases:
        return read_document(path, cls.from_json)

    def write(self, path: Path = BASES_PATH) -> Path:
        return write_document(path, self.to_json())


def release_bases(gdir: Path, releases: dict[str, str], main: str = MAIN) -> ReleaseBases:
    """The bases of ``releases`` (commit -> tag) in a git dir: ``git merge-base <commit> <main>``."""
    found = {}
    for commit, tag in releases.items():
        base = git.text(["merge-base", commit, main], git_dir=gdir, check=False)
        if base:
            found[commit] = {"tag": tag, "base": base}
    return ReleaseBases(found)


# ---------------------------------------------------------------------------------------------
# placing release steps on the main line


def _direction(row: Change) -> tuple[bool, bool]:
    return row.regression, row.fails


def _position(classes: Classes) -> dict[str, int]:
    return {c: i for i, k in enumerate(classes.classes) for c in k.commits}


def _window(classes: Classes, bases: ReleaseBases, row: Change) -> tuple[int, int, str, str] | None:
    """``(after, up to, base before, base after)``: the main-line class positions between the bases of a
    release step's two tags (the range's own start, left out of its classes, is position -1)."""
    before, after = bases.base(row.previous), bases.base(row.recorded or row.commit)
    if before is None or after is None:
        return None
    position = _position(classes)
    start = classes.range.split("..")[0]

    def at(commit: str) -> int | None:
        if commit in position:
            return position[commit]
        return -1 if start and commit.startswith(start) else None

    low, high = at(before), at(after)
    if low is None or high is None:
        return None
    return low, high, before, after


def _narrowed(found: ResultSet, classes: Classes, row: Change, low: int, high: int, base_before: str,
              base_after: str) -> tuple[str, str]:
    """The main-line commits between which the release step must lie: the last main-line record of the
    point with its before value in the window, and the first after it with its after value."""
    position = _position(classes)
    bench = next((b for b in catalogue.ALL if b.name == row.benchmark), None)
    x, y = base_before, base_after
    if bench is None:
        return x, y
    held = []
    for record in lines(found, classes).get("main", []):
        point = _points(record, bench).get(row.param)
        if point is not None and low < position[record.commit] <= high:
            held.append((position[record.commit], record.commit, point[0]))

    def same(a: object, b: object) -> bool:
        if FAILED in (a, b):
            return a == b
        return round(float(a), 4) == round(float(b), 4)  # type: ignore[arg-type]

    befores = [(p, c) for p, c, v in held if same(v, row.before)]
    if befores:
        p0, x = max(befores)
        afters = [(p, c) for p, c, v in held if p > p0 and same(v, row.after)]
        if afters:
            y = min(afters)[1]
    return x, y


def place_releases(table: Changes, found: ResultSet, classes: Classes | None,
                   bases: ReleaseBases | None) -> None:
    """Give each release-line row the main-line event it repeats (``event``), or a note saying where
    main-line commits must be recorded to place it."""
    main = [r for r in table.changes if r.line == "main"]
    position = _position(classes) if classes else {}
    for row in table.changes:
        if row.line != "releases" or row.previous in position or (row.recorded or row.commit) in position:
            continue
        window = _window(classes, bases, row) if classes and bases else None
        if window is None:
            row.note = "not placed: the release tags' bases are unknown (vkbench history bases --mirror M)"
            continue
        low, high, base_before, base_after = window
        match = next((m for m in main if m.benchmark == row.benchmark and m.param == row.param
                      and _direction(m) == _direction(row) and low < position.get(m.commit, -2) <= high),
                     None)
        if match is not None:
            row.event = match.event
            continue
        x, y = _narrowed(found, classes, row, low, high, base_before, base_after) if classes else \
            (base_before, base_after)
        row.note = f"not placed: record main-line commits between {x[:8]} and {y[:8]}"


# ---------------------------------------------------------------------------------------------
# events


_TIMES = re.compile(r" ×\d+")
_NUMBER = re.compile(r"(\d+)")


def _merged(texts: list[str]) -> str:
    """One line for texts that differ only in numbers (a byte offset in a file, a node count): the
    numbers that differ become ``…``."""
    split = [_NUMBER.split(t) for t in texts]
    return "".join(parts[0] if len({p[i] for p in split}) == 1 else "…" for i, parts in
                   enumerate(zip(*split, strict=True)))


def reasons(rows: list[Change]) -> list[str]:
    """Each distinct reason of the rows once: a failure's line, or the partitioner's reasons for the CPU
    ops that left (before) or joined (after) the CPU, without their per-workload node counts; a runtime
    rung's stored error line (a regression: where it stops now; an improvement: where it stopped
    before, what the commit got past). Lines that differ only in numbers (flatc's byte offset into each
    entry's schema.json) are one reason."""
    found: dict[str, list[str]] = {}
    for row in rows:
        if row.benchmark in LADDER_NAMES:
            texts = [row.reason_after or row.reason_before] if row.regression else [row.reason_before]
        elif FAILED in (row.before, row.after) or row.benchmark == catalogue.PROBE_FAILED.name:
            texts = [row.reason_after or row.reason_before]
        else:
            texts = [f"left the CPU: {_TIMES.sub('', part)}"
                     for part in row.reason_before.split(" | ") if part]
            texts += [f"joined the CPU: {_TIMES.sub('', part)}"
                      for part in row.reason_after.split(" | ") if part]
        for text in texts:
            if text:
                found.setdefault(_NUMBER.sub("#", text), []).append(text)
    return [_merged(group) if len(set(group)) > 1 else group[0] for group in found.values()]


def confirmation_text(rows: list[Change]) -> str:
    """What the stored re-measurements say of an event's rows, in one line."""
    done = [r for r in rows if r.confirmation is not None]
    older = sum(1 for r in rows if r.suite == OLDER)
    parts = []
    if done:
        first = done[0].confirmation
        assert first is not None
        parts.append(f"{sum(1 for r in done if r.confirmed)} of {len(rows)} steps re-measured on both "
                     f"sides and reproduced ({first.machine}, {first.date[:10]}, "
                     f"{first.suite or 'no suite digest'})")
        kept = sorted({r.confirmation.files for r in done if r.confirmation and r.confirmation.files})
        if kept:
            parts.append(f"what they re-measured is kept in {', '.join(kept)}")
        before = sum(1 for r in done if r.confirmation and r.confirmation.command is None)
        if before:
            parts.append(f"{before} re-measured before commands and files were kept")
    waiting = sum(1 for r in rows if r.awaits_confirmation and not r.machine)
    if waiting:
        parts.append(f"{waiting} not confirmed yet (vkbench history confirm --mirror M)")
    runtime = sum(1 for r in rows if r.awaits_confirmation and r.machine)
    if runtime:
        parts.append(f"{runtime} runtime steps not confirmed yet: each side needs its own Vulkan runtime "
                     "(vkbench history confirm --runners DIR)")
    if older:
        parts.append(f"{older} recorded by an older suite: re-record both sides with today's suite to "
                     "confirm")
    return "; ".join(parts)


def _order(event: Event, position: dict[str, int]) -> tuple[Any, ...]:
    return (not event.regression, any(r.suite != SAME for r in event.rows), event.line != "main",
            position.get(event.commit, len(position)), event.commit)


def _span(row: Change, bases: ReleaseBases | None) -> str:
    """``v1.3.1..v1.4.0`` of a release-line step (the commits when the tags are unknown)."""
    ends = [row.previous, row.recorded or row.commit]
    return "..".join((bases.tag(c) if bases else None) or c[:8] for c in ends)


def build_events(table: Changes, classes: Classes | None = None,
                 bases: ReleaseBases | None = None) -> list[Event]:
    """One event per ``event`` commit of the rows, regressing events first; within one, regressions
    first, then the main line's rows before the release line's repeats."""
    grouped: dict[str, list[Change]] = {}
    for row in table.changes:
        grouped.setdefault(row.event or row.commit, []).append(row)
    events = []
    for commit, rows in grouped.items():
        rows.sort(key=lambda r: (not r.regression, r.line != "main", r.benchmark, r.param))
        own = [r for r in rows if r.commit == commit] or rows
        head = next((r for r in own if r.line == "main"), own[0])
        base = f"{head.commit}^" if head.exact else head.previous
        lowering = [r for r in own if not r.machine]
        points = [(r.benchmark, r.param) for r in lowering]
        commands = [repro(points, base, head.commit)] if lowering else []
        commands += [runtime_repro([r for r in own if r.machine])] if len(lowering) < len(own) else []
        repeated = sorted({_span(r, bases) for r in rows if r.commit != commit})
        notes = sorted({r.note for r in rows if r.note.startswith("not placed")})
        subject = head.subject or (f"between release tags {_span(head, bases)}" if head.line == "releases"
                                   else "")
        events.append(Event(commit, head.previous, head.exact, head.line, subject, head.pr, head.files,
                            rows, reasons(rows), confirmation_text(rows), "; ".join(commands), repeated,
                            notes))
    position = _position(classes) if classes else {}
    return sorted(events, key=lambda e: _order(e, position))


def explain(found: ResultSet, classes: Classes | None = None, confirmations: Stored | None = None,
            bases: ReleaseBases | None = None, runtime_classes: Classes | None = None) -> Changes:
    """The changes table of ``found`` (:func:`vkbench.results.changes.changes`) with its release steps
    placed on the main line and its events; with ``runtime_classes`` (``classes-runtime.json``) the
    runtime machines' rung steps are rows and events too
    (:func:`~vkbench.results.runtime_timeline.runtime_steps`)."""
    table = changes(found, classes, confirmations, runtime_steps(found, runtime_classes))
    place_releases(table, found, classes, bases)
    table.events = build_events(table, classes, bases)
    return table


def read_bases(path: Path = BASES_PATH) -> ReleaseBases | None:
    """The stored release bases; None when there is no file (a corrupt one raises ``ValueError``)."""
    return ReleaseBases.read(path) if Path(path).is_file() else None
