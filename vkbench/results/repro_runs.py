"""What each standalone reproducer printed on a given build: ``results/bugs/repro-runs-<machine>.json``.

CI checks the lowering reproducers on the pinned stack (``tests/test_bugs.py``). The runtime ones
need a Vulkan-enabled ExecuTorch and a Vulkan device, which CI has not, so their check is a record:
``vkbench bugs run-repros --python PY --machine NAME`` runs every ``repro/*.py`` with that build's
interpreter, one process each (a fatal Vulkan check aborts the process), and writes per file the exit
status, whether the line its docstring promises (``Expected:``) was printed, the first error line and
the seconds; and the build: executorch (version and git commit), torch, whether ``VulkanBackend``
registered, the Vulkan devices. The bug list and its page read the records back, so a row says where
its reproducer was seen to fail and with which build.

The ``Expected:``/``Needs:`` docstring lines are read here and nowhere else.
"""

from __future__ import annotations

import ast
import datetime as dt
import json
import os
import re
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vkbench.paths import RESULTS_ROOT, ROOT

FORMAT = 1
RECORDS = RESULTS_ROOT / "bugs"
REPRO = ROOT / "repro"
#: Prints the build's facts as one JSON line (run with the build's interpreter).
_BUILD_FACTS = """
import json, torch, executorch
from executorch import version
from executorch.runtime import Runtime
print(json.dumps({"executorch": version.__version__, "git_version": version.git_version,
                  "torch": torch.__version__,
                  "vulkan_backend": Runtime.get().backend_registry.is_available("VulkanBackend")}))
"""


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


@dataclass
class ReproRecord:
    """Every reproducer, run with one build on one machine."""

    machine: str
    date: str
    python: str
    build: dict[str, Any]
    devices: list[dict[str, str]] = field(default_factory=list)
    runs: dict[str, ReproRun] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"vkbench_repro_runs": FORMAT, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReproRecord:
        if data.get("vkbench_repro_runs") != FORMAT:
            raise ValueError(f"not a version-{FORMAT} reproducer record")
        runs = {name: ReproRun(**run) for name, run in data["runs"].items()}
        return cls(data["machine"], data["date"], data["python"], data["build"], data.get("devices", []), runs)


#: Exit statuses that can mean "reproduced": 0, or SIGABRT where the runtime's check is fatal.
_REPRODUCED_RC = (0, -signal.SIGABRT)


def _telling_line(output: str, expected: str) -> str:
    """The line that says what happened: the expected one, else the first error, else the last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for wanted in ((lambda line: bool(expected) and expected in line),
                   (lambda line: line.startswith("error:") or "assert failed" in line)):
        for line in lines:
            if wanted(line):
                return line[:400]
    return lines[-1][:400] if lines else ""


def run_one(python: str, path: Path, timeout: float = 600) -> ReproRun:
    """``python path`` in its own folder; the outcome against its ``Expected:`` line."""
    expected = docstring_line(path, "Expected")
    start = time.perf_counter()
    try:
        done = subprocess.run([python, str(path)], capture_output=True, text=True, timeout=timeout,
                              cwd=path.parent)
        rc, output = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        rc, output = -1, f"timeout after {timeout:.0f}s"
    seconds = round(time.perf_counter() - start, 1)
    reproduced = rc in _REPRODUCED_RC and bool(expected) and expected in output
    return ReproRun(rc, reproduced, expected, _telling_line(output, expected), seconds)


def run(python: str, machine: str, paths: list[Path] | None = None) -> ReproRecord:
    """Run ``paths`` (default: every ``repro/*.py``) with ``python``; the record of it."""
    from vkbench.execution import device

    python = os.path.abspath(python) if os.sep in python else python  # each file runs in its own folder
    facts = subprocess.run([python, "-c", _BUILD_FACTS], capture_output=True, text=True, timeout=300)
    lines = [line for line in facts.stdout.splitlines() if line.startswith("{")]
    build = json.loads(lines[-1]) if lines else {"error": (facts.stderr.strip().splitlines() or ["?"])[-1]}
    record = ReproRecord(machine, dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%MZ"), python, build,
                         device.vulkan_devices().get("devices", []))
    for path in sorted(paths if paths is not None else REPRO.glob("*.py")):
        record.runs[path.stem] = run_one(python, path)
    return record


def write(record: ReproRecord, folder: Path = RECORDS) -> Path:
    """Write (replace) the machine's record; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"repro-runs-{record.machine}.json"
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
