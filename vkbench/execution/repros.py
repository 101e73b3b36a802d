"""Run the standalone reproducers of ``repro/`` with one build's interpreter, one process each.

A fatal Vulkan check aborts the process, so every file runs alone; the outcome of each is judged
against the ``Expected:`` line of its docstring. The record's form and its reader are
:mod:`vkbench.results.repro_runs`; this module only runs and builds it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import time
from pathlib import Path

from vkbench.execution import device
from vkbench.results.repro_runs import REPRO, ReproRecord, ReproRun, docstring_line

#: Prints the build's facts as one JSON line (run with the build's interpreter).
_BUILD_FACTS = """
import json, torch, executorch
from executorch import version
from executorch.runtime import Runtime
print(json.dumps({"executorch": version.__version__, "git_version": version.git_version,
                  "torch": torch.__version__,
                  "vulkan_backend": Runtime.get().backend_registry.is_available("VulkanBackend")}))
"""


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
    python = os.path.abspath(python) if os.sep in python else python  # each file runs in its own folder
    facts = subprocess.run([python, "-c", _BUILD_FACTS], capture_output=True, text=True, timeout=300)
    lines = [line for line in facts.stdout.splitlines() if line.startswith("{")]
    build = json.loads(lines[-1]) if lines else {"error": (facts.stderr.strip().splitlines() or ["?"])[-1]}
    record = ReproRecord(machine, dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%MZ"), python, build,
                         device.vulkan_devices().get("devices", []))
    for path in sorted(paths if paths is not None else REPRO.glob("*.py")):
        record.runs[path.stem] = run_one(python, path)
    return record
