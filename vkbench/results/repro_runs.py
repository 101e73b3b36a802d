"""What each standalone reproducer printed on a given build: ``results/bugs/repro-runs-<machine>.json``.

CI checks the lowering reproducers on the pinned stack (``tests/test_bugs.py``). The runtime ones
need a Vulkan-enabled ExecuTorch and a Vulkan device, which CI has not, so their check is a record:
``vkbench bugs --run-repros --python PY --machine NAME`` (:mod:`vkbench.execution.repros`) runs every
``repro/*.py`` with that build's interpreter, one process each (a fatal Vulkan check aborts the
process), and writes per file the exit
status, whether the line its docstring promises (``Expected:``) was printed, the first error line and
the seconds; and the build: executorch (version and git commit), torch, whether ``VulkanBackend``
registered, the Vulkan devices. The bug list and its page read the records back, so a row says where
its reproducer was seen to fail and with which build.

A record made with one ExecuTorch commit's Vulkan runtime (``vkbench runtime repro-run --commit``:
the commit's C++ runner over the saved bundles) names that commit in its build (``commit``) and lives
in ``results/bugs/upstream/``, one file per machine and commit: the runtime history of the
reproducers, which dates a runtime row that has no probe (:mod:`vkbench.results.bug_rows`).

The ``Expected:``/``Needs:`` docstring lines are read here and nowhere else.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from vkbench.paths import RESULTS_ROOT, ROOT

FORMAT = 1
RECORDS = RESULTS_ROOT / "bugs"
#: Records of one upstream commit's runtime each (their build's ``commit``), beside the machines' own.
HISTORY = RECORDS / "upstream"
REPRO = ROOT / "repro"
#: What a ``run_*`` reproducer (and :func:`vkbench.execution.repros.judge_native`) prints for a wrong output.
WRONG_OUTPUT = "error: wrong output"
#: The line of a run whose outputs were not compared with eager: it ran, and says nothing about them.
UNCOMPARED = "no error: ran"


def docstring_line(path: Path, key: str) -> str:
    """The ``<key>: ...`` line of a reproducer's docstring ("" when it has none)."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    match = re.search(rf"^{key}: (.+)$", doc, re.M)
    return match.group(1).strip() if match else ""


def needs_vulkan(path: Path) -> bool:
    """Does the reproducer need a Vulkan-enabled build (its ``Needs:`` line)?"""
    return docstring_line(path, "Needs").startswith("a Vulkan-enabled ExecuTorch")


@dataclass
class ReproRun:
    """One reproducer, run once."""

    rc: int
    reproduced: bool  #: exit status 0 and the ``Expected:`` text printed
    expected: str
    line: str  #: the line holding the expected text, else the first error line, else the last line
    seconds: float
    #: Only on a run added to a record made earlier (``vkbench bugs --run-repros --only``): when it ran,
    #: and the build facts in which it differs from the record's, so the record never claims a build
    #: that the run did not use.
    date: str = ""
    build: dict[str, Any] = field(default_factory=dict)

    @property
    def judged(self) -> bool:
        """Could this run show or refute its failure? Not for a wrong-output reproducer whose outputs
        were never compared with eager (a record made before the C++ runner's outputs were judged)."""
        return not (self.expected.startswith(WRONG_OUTPUT) and self.line == UNCOMPARED)

    @property
    def clean(self) -> bool:
        """Ran to the end without its failure, and could have shown it: the bug is absent here."""
        return self.rc == 0 and not self.reproduced and self.judged


@dataclass
class ReproRecord:
    """Every reproducer, run with one build on one machine."""

    machine: str
    date: str
    python: str
    build: dict[str, Any]
    devices: list[dict[str, str]] = field(default_factory=list)
    runs: dict[str, ReproRun] = field(default_factory=dict)

    @property
    def commit(self) -> str:
        """The ExecuTorch commit whose runtime ran (history records only; "" otherwise)."""
        return str(self.build.get("commit") or "")

    @property
    def file_name(self) -> str:
        return f"repro-runs-{self.machine}{'-' + self.commit[:8] if self.commit else ''}.json"

    def to_json(self) -> dict[str, Any]:
        data = {"vkbench_repro_runs": FORMAT, **asdict(self)}
        for run in data["runs"].values():  # a run of the record's own build and date says neither
            for key in ("date", "build"):
                if not run[key]:
                    del run[key]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReproRecord:
        if data.get("vkbench_repro_runs") != FORMAT:
            raise ValueError(f"not a version-{FORMAT} reproducer record")
        runs = {name: ReproRun(**run) for name, run in data["runs"].items()}
        return cls(data["machine"], data["date"], data["python"], data["build"], data.get("devices", []),
                   runs)


def merge(record: ReproRecord | None, added: ReproRecord) -> ReproRecord:
    """``record`` with the runs of ``added`` (a few reproducers run later on the same machine) in place.

    Re-running every reproducer to add one can be impossible (the build that recorded the others may be
    gone), so each added run keeps its own date and the build facts where ``added`` differs from
    ``record``; the record's own date and build stay those of its other runs.
    """
    if record is None:
        return added
    if record.machine != added.machine:
        raise ValueError(f"cannot merge a run on {added.machine} into the record of {record.machine}")
    differs = {key: value for key, value in added.build.items() if record.build.get(key) != value}
    runs = {**record.runs, **{name: replace(run, date=added.date, build=differs)
                              for name, run in added.runs.items()}}
    return ReproRecord(record.machine, record.date, record.python, record.build, record.devices, runs)


def read(machine: str, folder: Path = RECORDS) -> ReproRecord | None:
    """The machine's record under ``folder`` (None when it has none, or it is unreadable)."""
    return next((record for record in read_all(folder) if record.machine == machine), None)


def write(record: ReproRecord, folder: Path = RECORDS) -> Path:
    """Write (replace) the machine's record (of its commit, for a history record); returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / record.file_name
    path.write_text(json.dumps(record.to_json(), indent=1, sort_keys=False) + "\n")
    return path


def read_all(folder: Path = RECORDS) -> list[ReproRecord]:
    """Every machine's record under ``folder``, by machine name (unreadable files are skipped)."""
    records = []
    for path in sorted(folder.glob("repro-runs-*.json")):
        try:
            records.append(ReproRecord.from_json(json.loads(path.read_text())))
        except (ValueError, KeyError, TypeError):
            continue
    return records
