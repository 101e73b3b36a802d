"""The bug list's knowledge: the facts of each row that no recorded result can tell, and their schema.

Who would fix a failure, how to recognise it in a recorded error, the probe and reproducer that
track it and what the investigation found are written by hand, once, in ``bugs.toml`` beside this
module (its header lists the keys). This module is its schema (:class:`Bug`) and its one reader:
:func:`load` checks every entry and names the file and the entry on an error, so a typo in an owner
or a pattern fails loudly instead of dropping a row. What changes with the data is computed from
the results by :mod:`vkbench.results.bug_rows`.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import Any

#: The knowledge file shipped with vkbench.
SOURCE = Path(__file__).with_name("bugs.toml")
SCHEMA = 1

PARTITIONER = "ExecuTorch Vulkan partitioner"
RUNTIME = "Vulkan runtime"
EXIR = "exir/serialization"
TORCH_EXPORT = "torch.export"
LEROBOT = "LeRobot model code"
VKBENCH = "vkbench's own build of the policy"
NOT_RECORDED = "not recorded"
NOT_CLASSIFIED = "not classified"
#: Every owner a row can have, in the order summaries list them.
OWNERS = (PARTITIONER, RUNTIME, EXIR, TORCH_EXPORT, LEROBOT, VKBENCH, NOT_RECORDED, NOT_CLASSIFIED)
#: Owners whose rows must carry a probe and a reproducer (ExecuTorch's and torch's).
UPSTREAM = (PARTITIONER, RUNTIME, EXIR, TORCH_EXPORT)

#: Stages of building and lowering an entry (``vkbench.core.lowering.STAGES`` after ``build``).
LOWERING_STAGES = ("build", "export", "to_edge", "partition", "preprocess", "to_executorch")
#: Stages at which a failure happens while running the program.
RUNTIME_STAGES = ("load", "run")
#: How a probe's per-commit record shows a row's failure (:mod:`vkbench.results.probe_history`).
HISTORIES = ("", "fails", "whole")
#: The ``[needs]`` defaults, by the stage a failure happens at.
NEEDS_KEYS = ("lowering", "export", "runtime")
#: What a row is: a failure (found in the recorded results by its pattern, dated by its probe) or a
#: performance bug (nothing fails: a stage does needless work; dated by hand, its what-if measured).
FAILURE, PERFORMANCE = "failure", "performance"
KINDS = (FAILURE, PERFORMANCE)
#: Keys only a performance row states: no probe's record can date it, and its what-if is a file.
_PERFORMANCE_ONLY = ("first_bad", "fixed_in", "measured")
#: Keys that find a failure in the results: a performance row has none.
_FAILURE_ONLY = ("pattern", "only", "recorded", "workarounds", "history", "fix_branch")
#: Where a row's fix (its probe's record turning good) landed: "" (where the history shows it) or
#: ``release`` (on a release branch only: main still fails, so the row says where main stands too).
FIX_BRANCHES = ("", "release")


@dataclass(frozen=True)
class Bug:
    """The static facts of one row, as ``bugs.toml`` states them (its header explains each key).

    ``pattern`` is searched (case-sensitive) in a recorded block, written ``stage: Type: message``;
    ``only`` limits it to some entries (a ``GuardOnDataDependentSymNode`` names no code location, so
    export rows name the entries whose traceback was read). ``recorded`` lists, for a runtime row,
    the entries whose error line ``docs/runtime.md`` records; a runtime row's ``pattern`` is searched in
    the runtime error line the ladder stored (:func:`vkbench.results.ladder.stop_reasons`), so an
    entry that stops with that line joins the row without being listed. ``repro`` is ``repro/<id>.py`` for a
    row with a reproducer, and ``needs`` what it needs to run (the stage's default unless stated).

    ``kind`` is ``failure`` unless stated; a ``performance`` row (nothing fails, a stage does needless
    work) matches no recorded block and states its own ``first_bad`` and ``fixed_in`` (checked in the
    ExecuTorch history by hand) and ``measured``: its what-if's file under the results folder.

    ``fix_branch`` is ``release`` for a row whose fix its probe's record shows on a release only, the
    fix being absent from main (checked in the ExecuTorch history by hand): the row then says where
    main stands at its newest recorded commit as well (:mod:`vkbench.results.bug_rows`).
    """

    id: str
    stage: str
    error: str
    owner: str
    pattern: str = ""
    only: tuple[str, ...] = ()
    recorded: tuple[str, ...] = ()
    workarounds: tuple[str, ...] = ()
    probe: str = ""
    repro: str = ""
    needs: str = ""
    history: str = ""
    note: str = ""
    kind: str = FAILURE
    first_bad: str = ""
    fixed_in: str = ""
    measured: str = ""
    fix_branch: str = ""


@dataclass(frozen=True)
class Knowledge:
    """What ``bugs.toml`` holds: the rows in list order, and the row for unrecorded load failures."""

    bugs: tuple[Bug, ...]
    unrecorded_load: Bug


_REQUIRED = ("id", "stage", "owner", "error")
_LISTS = ("only", "recorded", "workarounds")
#: Keys of an entry: the :class:`Bug` fields it states (``repro`` is the ``reproducer`` flag).
_KEYS = {f.name for f in fields(Bug)} - {"repro"} | {"reproducer"}


class KnowledgeError(ValueError):
    """``bugs.toml`` (or a file given in its place) is not valid; ``str()`` names the file and the entry."""


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _problem(entry: dict[str, Any]) -> str | None:
    """What is wrong with one entry's keys and values, or None."""
    if unknown := sorted(set(entry) - _KEYS):
        return f"unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})"
    if missing := [key for key in _REQUIRED if not entry.get(key)]:
        return f"no {missing[0]!r}"
    for key, value in entry.items():
        if key in _LISTS and not _strings(value):
            return f"{key!r} must be a list of strings"
        if key == "reproducer" and not isinstance(value, bool):
            return "'reproducer' must be true or false"
        if key not in _LISTS and key != "reproducer" and not isinstance(value, str):
            return f"{key!r} must be a string"
    stage, history = entry["stage"], entry.get("history", "")
    if not re.fullmatch(r"[a-z0-9_]+", entry["id"]):
        return f"id {entry['id']!r} is not [a-z0-9_]+ (it names repro/<id>.py)"
    if stage not in (*LOWERING_STAGES, *RUNTIME_STAGES):
        return f"stage {stage!r} is not one of {', '.join((*LOWERING_STAGES, *RUNTIME_STAGES))}"
    if entry["owner"] not in OWNERS:
        return f"owner {entry['owner']!r} is not one of {', '.join(OWNERS)}"
    if history not in HISTORIES:
        return f"history {history!r} is not 'fails' or 'whole'"
    kind = entry.get("kind", FAILURE)
    if kind not in KINDS:
        return f"kind {kind!r} is not one of {', '.join(KINDS)}"
    if kind == FAILURE and (stated := [key for key in _PERFORMANCE_ONLY if key in entry]):
        return f"{stated[0]!r} is stated only on a performance row (a failure row is dated by its probe)"
    if kind == PERFORMANCE and (stated := [key for key in _FAILURE_ONLY if key in entry]):
        return f"a performance row matches no recorded failure: no {stated[0]!r}"
    if kind == PERFORMANCE and (missing := [key for key in ("first_bad", "fixed_in") if not entry.get(key)]):
        return f"a performance row states its {missing[0]!r} (no probe's record dates it)"
    if history and not entry.get("probe"):
        return "a 'history' needs a 'probe'"
    if entry.get("fix_branch", "") not in FIX_BRANCHES:
        return f"fix_branch {entry['fix_branch']!r} is not 'release'"
    if entry.get("fix_branch") and not history:
        return "a 'fix_branch' needs a 'history' (the probe's record dates the fix)"
    if stage in RUNTIME_STAGES and entry.get("only"):
        return "a runtime row names its entries in 'recorded' (and its 'pattern'), not by 'only'"
    if stage in LOWERING_STAGES and entry.get("recorded"):
        return "a lowering row finds its entries by 'pattern', not 'recorded'"
    try:
        re.compile(entry.get("pattern", ""))
    except re.error as error:
        return f"pattern is not a regular expression ({error})"
    return None


def _bug(entry: dict[str, Any], needs: dict[str, str]) -> Bug:
    stage = entry["stage"]
    default = needs["runtime" if stage in RUNTIME_STAGES else "export" if stage == "export" else "lowering"]
    values = {key: tuple(value) if key in _LISTS else value for key, value in entry.items()
              if key != "reproducer"}
    repro = f"repro/{entry['id']}.py" if entry.get("reproducer") else ""
    return Bug(**{**values, "repro": repro, "needs": entry.get("needs") or default})


def load(path: Path = SOURCE) -> Knowledge:
    """Every row of the knowledge file, checked; :class:`KnowledgeError` naming the file and entry."""
    try:
        data = tomllib.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise KnowledgeError(f"{path}: not readable TOML ({type(error).__name__}: {error})") from None
    if data.get("schema") != SCHEMA:
        raise KnowledgeError(f"{path}: schema is {data.get('schema')!r}, this vkbench reads {SCHEMA}")
    if unknown := sorted(set(data) - {"schema", "needs", "bug", "unrecorded_load"}):
        raise KnowledgeError(f"{path}: unknown table {unknown[0]!r}")
    needs = data.get("needs")
    if not isinstance(needs, dict) or sorted(needs) != sorted(NEEDS_KEYS) or not all(
            isinstance(v, str) and v for v in needs.values()):
        raise KnowledgeError(f"{path}: [needs] must give {', '.join(NEEDS_KEYS)} as strings")
    entries = [(f"[[bug]] {index}", entry) for index, entry in enumerate(data.get("bug") or [], start=1)]
    entries.append(("[unrecorded_load]", data.get("unrecorded_load")))
    found: list[Bug] = []
    for where, entry in entries:
        if not isinstance(entry, dict):
            raise KnowledgeError(f"{path}: {where}: missing or not a table")
        problem = _problem(entry)
        named = f"{where} ({entry['id']})" if isinstance(entry.get("id"), str) and entry["id"] else where
        if problem is None and any(bug.id == entry["id"] for bug in found):
            problem = f"id {entry['id']!r} is used by an earlier entry"
        if problem is not None:
            raise KnowledgeError(f"{path}: {named}: {problem}")
        found.append(_bug(entry, needs))
    return Knowledge(tuple(found[:-1]), found[-1])


@cache
def knowledge() -> Knowledge:
    """The shipped knowledge file, read once per process."""
    return load(SOURCE)
