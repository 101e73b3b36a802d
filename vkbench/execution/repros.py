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
import tempfile
import time
from pathlib import Path
from typing import Any

from vkbench.execution import device
from vkbench.results.repro_runs import REPRO, UNCOMPARED, WRONG_OUTPUT, ReproRecord, ReproRun, docstring_line

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


def run_group(command: list[str], timeout: float, cwd: Path | None = None,
              env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run ``command`` in its own process group; its exit status and stdout + stderr.

    A reproducer loads its program in a child of its own (so a crash can be reported): on a
    timeout the whole group is killed, not just the direct child, so nothing is left running.
    """
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                          env=env, start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return -1, f"timeout after {timeout:.0f}s"
    return proc.returncode, out + err


def run_one(python: str, path: Path, timeout: float = 600) -> ReproRun:
    """``python path`` in its own folder; the outcome against its ``Expected:`` line."""
    expected = docstring_line(path, "Expected")
    start = time.perf_counter()
    rc, output = run_group([python, str(path)], timeout, cwd=path.parent)
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


# -- the runtime reproducers through the C++ runner (a machine without executorch's Python) -------------

#: Bundle workload names of the runtime reproducers: ``repro/<row id>``.
REPRO_PREFIX = "repro/"


def runtime_reproducers() -> list[Path]:
    """The ``repro/*.py`` files of the runtime rows (stage ``load`` or ``run``) of the bug list."""
    from vkbench.results.bug_knowledge import RUNTIME_STAGES, knowledge
    from vkbench.results.repro_runs import REPRO

    return sorted(REPRO.parent / bug.repro for bug in knowledge().bugs
                  if bug.stage in RUNTIME_STAGES and bug.repro and (REPRO.parent / bug.repro).is_file())


class _Captured(BaseException):  # noqa: N818 - not an error: it ends the reproducer at its load
    """Raised where a reproducer hands its program to the runtime (not an ``Exception``: the
    reproducers catch those as the documented failure)."""


def capture(path: Path) -> tuple[bytes, list[Any], list[Any]]:
    """``(program, inputs, eager outputs)`` of one reproducer, taken where it loads its program.

    The reproducer's own ``main()`` runs in this process: its export (the inputs and the exported
    program, whose module gives the eager outputs) and its lowering are its own; where it would hand
    the program to ``executorch.runtime``, the bytes are kept and the run ends. Needs torch and
    executorch's Python only (no runtime that executes), so the PyPI wheel does.
    """
    import contextlib
    import importlib.util
    import io
    from unittest import mock

    import torch
    from executorch import runtime as et_runtime

    from vkbench.execution.bundle import flat_arrays

    seen: dict[str, Any] = {}
    real_export = torch.export.export

    def export(module: Any, args: tuple[Any, ...], *rest: Any, **options: Any) -> Any:
        program = real_export(module, args, *rest, **options)
        seen["program"], seen["inputs"] = program, args
        return program

    class _Registry:
        def is_available(self, name: str) -> bool:
            return True

    class _Runtime:
        backend_registry = _Registry()

        def load_program(self, data: Any, *args: Any, **options: Any) -> Any:
            seen["pte"] = bytes(data)
            raise _Captured

    spec = importlib.util.spec_from_file_location(f"vkbench_repro_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with (mock.patch.object(torch.export, "export", export),
          mock.patch.object(et_runtime.Runtime, "get", staticmethod(lambda: _Runtime())),
          contextlib.redirect_stdout(io.StringIO())):
        spec.loader.exec_module(module)
        try:
            module.main()
        except _Captured:
            pass
    if "pte" not in seen or "program" not in seen:
        raise RuntimeError(f"{path.name} did not hand a program to the runtime")
    with torch.no_grad():
        expected = seen["program"].module()(*seen["inputs"])
    return seen["pte"], flat_arrays(seen["inputs"]), flat_arrays(expected)


def export_bundles(folder: Path, paths: list[Path] | None = None) -> list[Path]:
    """Save a bundle (``repro/<id>``: its Vulkan program, inputs, eager outputs) per runtime reproducer."""
    from vkbench.execution.bundle import Bundle, toolchain
    from vkbench.execution.outcome import Outcome

    saved = []
    for path in paths if paths is not None else runtime_reproducers():
        workload = REPRO_PREFIX + path.stem
        pte, inputs, expected = capture(path)
        lowered = Outcome(workload, "vulkan", "", ok=True, program_bytes=len(pte))
        bundle = Bundle(workload, inputs, expected, {"vulkan": pte}, {"vulkan": lowered}, toolchain())
        saved.append(bundle.save(folder))
    return saved


def judge_native(expected: str, output: str, outputs: list[Any] | None,
                 eager: list[Any] | None = None) -> tuple[bool, str]:
    """``(reproduced, line)`` of one C++ runner run: its stdout and stderr, and its outputs if it ran.

    The reproducers' own judgement, for a runner that is not their Python: a failure line holding the
    ``Expected:`` text, or, for a program that runs, a wrong output, as ``run_*`` reproducers print it:
    ``error: wrong output: NaN (k of n values)``, or ``error: wrong output: max abs diff D, SNR S dB``
    where the signal-to-noise ratio against eager is below the ladder's 40 dB.
    """
    import numpy as np

    lines = []
    for line in output.splitlines():  # the runner's JSON failure line, as the reproducers print theirs
        said = json.loads(line) if line.startswith("{") and line.rstrip().endswith("}") else None
        lines.append(f"error: {said.get('stage')}: {said.get('error')}" if said and not said.get("ok")
                     else line)
    text = "\n".join(lines)
    if outputs is not None:
        floats = [np.asarray(o) for o in outputs if np.asarray(o).dtype.kind == "f"]
        nan = sum(int(np.isnan(o).sum()) for o in floats)
        total = sum(o.size for o in floats)
        ran = UNCOMPARED
        if not nan and eager is not None:
            from vkbench.execution.outcome import MATCH_SNR_DB, compare

            try:
                diff, snr, _ = compare(outputs, eager)
                distance = f"max abs diff {diff:.3g}" + (f", SNR {snr:.1f} dB" if snr is not None else "")
                ran = (f"{WRONG_OUTPUT}: {distance}" if snr is not None and snr < MATCH_SNR_DB
                       else f"{ran}, {distance}")
            except ValueError as error:
                ran += f" ({error})"
        text += "\n" + (f"{WRONG_OUTPUT}: NaN ({nan} of {total} values)" if nan else ran)
    return bool(expected) and expected in text, _telling_line(text, expected)


def crash_line(rc: int, output: str) -> str:
    """What a C++ runner killed by a signal could not print, as the reproducers print it ("" if none).

    A segfault leaves no line of the runtime's; the reproducers run the load in a child and print
    ``error: load crashed: SIGSEGV (exit -11)``, so the runner's death reads the same. ``# loaded``
    (printed first by ``pte_runner``) tells a crash while executing from one while loading.
    """
    if rc >= 0 or rc == -1:  # -1: our own timeout
        return ""
    try:
        name = signal.Signals(-rc).name
    except ValueError:
        name = f"signal {-rc}"
    stage = "execute" if "# loaded" in output else "load"
    return f"error: {stage} crashed: {name} (exit {rc})"


def run_native(folder: Path, machine: str, runner_path: Path, paths: list[Path] | None = None,
               timeout: float = 300) -> ReproRecord:
    """Run each runtime reproducer's saved bundle (``export_bundles``) with the C++ runner.

    Each run is its own ``pte_runner`` process (an abort ends only it). The record's ``python`` is
    the runner's path and ``build`` names the libraries beside it, and whether the Vulkan backend is
    one of them (``vulkan_backend``, as a Python run's build says whether it registered).
    """
    import numpy as np

    from vkbench.build.full import LIB_NAME  # the library `vkbench build full` makes
    from vkbench.execution.bundle import Bundle
    from vkbench.execution.runners import SCALAR_TYPES, runner_environment

    libraries = sorted(p.name for p in Path(runner_path).parent.glob("*.so"))
    record = ReproRecord(machine, dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%MZ"), str(runner_path),
                         {"runner": "pte_runner (C++)", "libraries": libraries,
                          "vulkan_backend": LIB_NAME in libraries},
                         device.vulkan_devices().get("devices", []))
    for path in paths if paths is not None else runtime_reproducers():
        expected = docstring_line(path, "Expected")
        bundle = Bundle.load(folder, REPRO_PREFIX + path.stem)
        if bundle is None or "vulkan" not in bundle.programs:
            record.runs[path.stem] = ReproRun(-1, False, expected, f"no saved bundle in {folder}", 0.0)
            continue
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as work:
            program = Path(work) / "program.pte"
            program.write_bytes(bundle.programs["vulkan"])
            for index, array in enumerate(bundle.inputs):
                (Path(work) / f"input_{index}.bin").write_bytes(np.ascontiguousarray(array).tobytes())
            rc, output = run_group([str(runner_path), str(program), "--io", work, "1"], timeout,
                                   env=runner_environment(Path(runner_path)))
            if crashed := crash_line(rc, output):
                output += "\n" + crashed
            outputs = None
            line = next((ln for ln in reversed(output.splitlines()) if ln.startswith("{")), "")
            if line and json.loads(line).get("ok"):
                outputs = [np.fromfile(Path(work) / f"output_{o['index']}.bin",
                                       dtype=SCALAR_TYPES.get(o["dtype"], "uint8"))
                           for o in json.loads(line)["outputs"]]
        reproduced, telling = judge_native(expected, output, outputs, bundle.expected)
        record.runs[path.stem] = ReproRun(rc, reproduced, expected, telling,
                                          round(time.perf_counter() - start, 1))
    return record
