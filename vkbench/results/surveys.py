"""The one reader of the saved policy surveys, ``results/policies/executorch-<version>-<machine>.json``.

``vkbench policies --json`` writes one per ExecuTorch release and machine (rows per policy entry:
nodes, CPU nodes, the default lowering's blocker, ...; and the blockers by op). The bug list, the
dashboard and the generated docs read the newest of them through :func:`latest_survey`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FOLDER = "policies"
_NAME = re.compile(r"executorch-(?P<version>[^-]+)-(?P<machine>.+)\.json$")


@dataclass
class SurveyFile:
    """One saved survey, as stored."""

    path: Path
    version: str  #: ExecuTorch version from the file name ("?" when the name does not say)
    machine: str
    rows: list[dict[str, Any]] = field(default_factory=list)  #: one per policy entry
    blockers: dict[str, Any] = field(default_factory=dict)  #: ``by_op``: the ops that block most entries

    @property
    def name(self) -> str:
        return self.path.name


def version_key(path: Path) -> tuple[tuple[int, ...], str]:
    """``executorch-1.10.0-...`` sorts after ``executorch-1.9.1-...`` (numerically, not by name)."""
    match = re.match(r"executorch-([\d.]+)", path.name)
    version = tuple(int(p) for p in match.group(1).strip(".").split(".")) if match else ()
    return version, path.name


def read_survey(path: Path) -> SurveyFile:
    """One survey file; ``ValueError`` naming it when it is not one."""
    try:
        data = json.loads(path.read_text())
        rows, blockers = list(data.get("rows", [])), dict(data.get("blockers") or {})
    except (OSError, ValueError, AttributeError, TypeError) as error:
        raise ValueError(f"{path}: not a readable policy survey ({type(error).__name__}: {error})") from error
    match = _NAME.match(path.name)
    return SurveyFile(path, match["version"] if match else "?", match["machine"] if match else "?",
                      rows, blockers)


def latest_path(results_root: Path) -> Path | None:
    """The newest ExecuTorch's survey file under ``results_root`` (None when none is committed)."""
    paths = sorted((results_root / FOLDER).glob("*.json"), key=version_key)
    return paths[-1] if paths else None


def latest_survey(results_root: Path) -> SurveyFile | None:
    """The newest ExecuTorch's survey (None when none is committed)."""
    path = latest_path(results_root)
    return read_survey(path) if path else None
