"""Everything recorded under one results root, read once: :class:`Recorded`.

The bug list, the changes table and every page of the site need the same files (asv's results of
the releases and of upstream commits, the release ledger, the newest policy survey, the commit
classes of the range, lowering's and runtime's, the reproducer runs). :func:`read_recorded` reads
each through its one reader and keeps what could not be read as one line each, so callers compute
from one object instead of re-reading (and re-parsing) the checkout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from vkbench.commits.classes import Classes, stored
from vkbench.results.asv_files import read_dir
from vkbench.results.ledger_file import Release, read_ledger
from vkbench.results.model import ResultSet
from vkbench.results.repro_runs import ReproRecord, read_all
from vkbench.results.surveys import SurveyFile, latest_survey


@dataclass
class Recorded:
    """The recorded data under ``root`` (``results/`` of the checkout, or a copy of it)."""

    root: Path
    releases: ResultSet  #: ``releases/``: the installed releases, filed under ledger commits
    upstream: ResultSet  #: ``upstream/``: commits of ExecuTorch's history
    ledger: list[Release]  #: ``ledger.json``
    survey: SurveyFile | None  #: the newest ``policies/*.json``
    classes: Classes | None  #: ``history/classes-gate.json``: the range's commit classes
    repro_runs: list[ReproRecord]  #: ``bugs/repro-runs-*.json``
    problems: list[str] = field(default_factory=list)  #: one line per file that could not be read
    #: ``history/classes-runtime.json``: the runtime classes, which order the runtime machines' commits.
    runtime_classes: Classes | None = None
    #: ``bugs/upstream/repro-runs-*.json``: the reproducers run by upstream commits' runtimes.
    repro_history: list[ReproRecord] = field(default_factory=list)


def read_recorded(root: Path) -> Recorded:
    """Read every recorded file under ``root`` once; unreadable ones become ``problems``, not errors."""
    root = Path(root)
    problems: list[str] = []
    releases, upstream = read_dir(root / "releases"), read_dir(root / "upstream")
    problems += [str(p) for p in [*releases.problems, *upstream.problems]]
    try:
        ledger = read_ledger(root)
    except ValueError as error:
        ledger, problems = [], [*problems, str(error)]
    try:
        survey = latest_survey(root)
    except ValueError as error:
        survey, problems = None, [*problems, str(error)]
    found: dict[str, Classes | None] = {}
    for tier in ("gate", "runtime"):
        try:
            found[tier] = stored(root, tier)
        except (OSError, ValueError, KeyError, TypeError) as error:
            found[tier] = None
            problems.append(f"{root / 'history'}: {tier} classes not readable ({error})")
    return Recorded(root, releases, upstream, ledger, survey, found["gate"], read_all(root / "bugs"),
                    problems, found["runtime"], read_all(root / "bugs" / "upstream"))
