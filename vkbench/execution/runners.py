"""The two runners: ExecuTorch's Python runtime in this process, and its C++ runtime alone.

Why a second runner: the Python runtime (``executorch.runtime``) of the
1.5.1 wheel only executes beside the torch its ``_C`` was built against
(2.13, not the pinned 2.11), and a machine that cannot install that torch
(the H200 device machine: no network, 64 MiB per transfer) still runs the
wheel's ``libexecutorch.so`` and our Vulkan backend library. ``pte_runner.cpp``
links just those (plus any other backend or kernel library named at build),
loads a ``.pte``, executes it ``VKBENCH_MIN_REPEATS + 1`` times (the first is a warm-up)
on inputs read from files and writes the outputs back; it prints one JSON line.

Both runners take the same thing, a lowered program and its inputs as numpy
arrays, and return the same thing, :class:`Execution` (outputs as numpy
arrays, times in seconds), or raise :class:`RunFailed` with the stage
(``runtime``, ``load``, ``execute``, ``crash``, ``timeout``) and first error line.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vkbench import settings
from vkbench.core.failures import typed_error_line
from vkbench.execution import device

SOURCE = Path(__file__).with_name("pte_runner.cpp")
#: What ``pte_runner`` prints once the method is loaded: a crash or hang after it happened executing.
LOADED = "# loaded"
#: ExecuTorch ScalarType codes -> numpy dtype names (the ones programs here produce).
SCALAR_TYPES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32",
                7: "float64", 11: "bool"}


class RunFailed(RuntimeError):
    """A runner could not get a program to execute: ``stage`` says where."""

    def __init__(self, stage: str, error: str) -> None:
        super().__init__(f"{stage}: {error}")
        self.stage, self.error = stage, error[:500]


@dataclass
class Execution:
    """What a runner measured: outputs (numpy, flattened) and times in seconds."""

    outputs: list[Any]
    load_s: float
    first_execute_s: float | None  #: None where the runner does not time its warm-up (C++)
    execute_s: list[float]  #: one per timed repeat, after the first (warm-up) execute

    @property
    def median_s(self) -> float:
        return statistics.median(self.execute_s)


def timing() -> dict[str, float]:
    """At least ``min_repeats`` executes, more while under ``budget_s``, at most ``max_repeats``
    (``VKBENCH_MIN_REPEATS`` / ``VKBENCH_MAX_REPEATS`` / ``VKBENCH_TIME_BUDGET_S``)."""
    return {"min_repeats": settings.integer("VKBENCH_MIN_REPEATS"),
            "max_repeats": settings.integer("VKBENCH_MAX_REPEATS"),
            "budget_s": settings.number("VKBENCH_TIME_BUDGET_S")}


def time_calls(call: Callable[[], Any]) -> list[float]:
    """Seconds per ``call()``, as many as :func:`timing` allows."""
    limits = timing()
    samples: list[float] = []
    started = time.perf_counter()
    while len(samples) < limits["max_repeats"]:
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
        if len(samples) >= limits["min_repeats"] and time.perf_counter() - started > limits["budget_s"]:
            break
    return samples


class PythonRunner:
    """``executorch.runtime`` in this process (needs a runtime that executes programs)."""

    name = "python"
    #: Runs in the measuring process: a Vulkan abort ends that process (``measure`` runs it last).
    in_process = True

    def ready(self, backend: str) -> tuple[bool, str]:
        """``(ready, reason)``: can programs lowered for ``backend`` run in this Python?"""
        if backend not in device.RUNTIME_BACKEND:
            return False, f"unknown backend {backend!r}"
        if backend == "vulkan":
            registered, reason = device.vulkan_registered()
            if not registered:
                return False, reason
            devices = device.vulkan_devices()
            if devices["available"] is False:
                return False, f"no Vulkan device: {devices.get('error', 'vulkaninfo lists none')}"
        elif device.RUNTIME_BACKEND[backend]:
            registered, reason = device.backend_registered(device.RUNTIME_BACKEND[backend])
            if not registered:
                return False, reason
        return executes_programs()

    def run(self, pte: bytes, inputs: list[Any], loaded: Callable[[], None] | None = None) -> Execution:
        """Load and execute ``pte``; ``loaded()`` is called between the two (see ``measure``)."""
        import torch

        stage = "load"
        with logged_stderr() as log:
            try:
                start = time.perf_counter()
                method = load_method(pte)
                load_s = time.perf_counter() - start
                stage = "execute"
                if loaded is not None:
                    loaded()
                args = [torch.from_numpy(a.copy()) for a in inputs]
                start = time.perf_counter()
                outputs = [o.numpy() for o in method.execute(args) if hasattr(o, "numpy")]
                first_s = time.perf_counter() - start
                times = time_calls(lambda: method.execute(args))
            except Exception as error:  # noqa: BLE001 - the runner reports, the caller records
                raise RunFailed(stage, named_error(typed_error_line(error), log())) from error
        return Execution(outputs, load_s, first_s, times)


@contextlib.contextmanager
def logged_stderr() -> Iterator[Callable[[], str]]:
    """Keep what this process writes to file descriptor 2 (the C++ runtime's log) while it runs,
    passing it on to the real stderr afterwards; yields a function returning what was written so far.

    ExecuTorch's Python runtime raises ``RuntimeError: Failed to load method ...``; the reason (a
    ``VK_CHECK``'s file, line and condition) is only in its log.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)

        def written() -> str:
            sys.stderr.flush()
            sink.seek(0)
            return sink.read().decode(errors="replace")

        try:
            yield written
        finally:
            text = written()
            os.dup2(saved, 2)
            os.close(saved)
            sys.stderr.write(text)
            sys.stderr.flush()


def load_method(pte: bytes, name: str = "forward") -> Any:
    """A freshly loaded method (a new Program each time: Program caches methods)."""
    runtime = device.runtime_module()
    program = runtime.Runtime.get().load_program(pte, verification=runtime.Verification.Minimal)
    method = program.load_method(name)
    method._vkbench_program = program  # keep the program (and its bytes) alive with the method
    return method


@functools.cache
def executes_programs() -> tuple[bool, str]:
    """Can this Python's ExecuTorch runtime execute a program at all?

    The PyPI executorch 1.5.1 wheel with torch 2.11 cannot (``tensor does not
    have a device``: its ``_C`` was built against another torch), so every
    runtime number would be a failure for the same reason; this asks once,
    with a portable ``x * 2 + 1``, and says why not.
    """
    if (missing := device.runtime_import_error()) is not None:
        return False, missing
    try:
        import torch

        from vkbench.core.lowering import lower

        class Affine(torch.nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return x * 2 + 1

        x = torch.arange(4, dtype=torch.float32)
        _, program = lower(Affine(), (x,), backend="portable", keep_program=True)
        out = load_method(bytes(program.buffer)).execute([x])[0]
        if not torch.equal(out, x * 2 + 1):
            return False, f"the runtime executes but computes x*2+1 wrong: {out.tolist()}"
    except Exception as error:  # noqa: BLE001 - the reason is the answer
        return False, ("this executorch runtime cannot execute programs (portable x*2+1): "
                       f"{typed_error_line(error)}")
    return True, "the runtime executes programs"


class NativeRunner:
    """``pte_runner`` (``VKBENCH_PTE_RUNNER``), built by :func:`build_runner`, in a child process."""

    name = "native"
    #: A crash or hang of ``pte_runner`` is its own process's: it becomes a ``RunFailed``.
    in_process = False

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else settings.path("VKBENCH_PTE_RUNNER")

    def _missing(self) -> str | None:
        if self.path is None or not self.path.is_file():
            return ("no C++ runner: set VKBENCH_PTE_RUNNER to a built pte_runner "
                    "(vkbench runtime build-runner)")
        return None

    def ready(self, backend: str) -> tuple[bool, str]:
        """Whether a runner is built; which backends it links shows at load."""
        if backend not in device.RUNTIME_BACKEND:
            return False, f"unknown backend {backend!r}"
        if (missing := self._missing()) is not None:
            return False, missing
        return True, f"C++ runner {self.path}"

    def run(self, pte: bytes, inputs: list[Any], loaded: Callable[[], None] | None = None) -> Execution:
        """Run ``pte`` in ``pte_runner``, which names its own failing stage; ``loaded()`` after a run."""
        import numpy as np

        if (missing := self._missing()) is not None:
            raise RunFailed("runtime", missing)
        timeout = settings.number("VKBENCH_RUN_TIMEOUT")
        repeats = settings.integer("VKBENCH_MIN_REPEATS")
        with tempfile.TemporaryDirectory() as work:
            program = Path(work) / "program.pte"
            program.write_bytes(pte)
            for index, array in enumerate(inputs):
                (Path(work) / f"input_{index}.bin").write_bytes(np.ascontiguousarray(array).tobytes())
            data, failure = invoke_runner(self.path, [str(program), "--io", work, str(repeats)], timeout)
            if failure is not None:
                raise RunFailed(*failure)
            if loaded is not None:
                loaded()
            outputs = [np.fromfile(Path(work) / f"output_{o['index']}.bin",
                                   dtype=SCALAR_TYPES.get(o["dtype"], "uint8")) for o in data["outputs"]]
        return Execution(outputs, data["load_s"], None, data["execute_s"])


#: Runner name -> class: the values of the asv ``runner`` parameter.
RUNNERS: dict[str, type[PythonRunner] | type[NativeRunner]] = {"python": PythonRunner, "native": NativeRunner}


def runner(name: str) -> PythonRunner | NativeRunner:
    if name not in RUNNERS:
        raise ValueError(f"unknown runner {name!r}; choose from {', '.join(RUNNERS)}")
    return RUNNERS[name]()


def build_runner(
    out_dir: str | os.PathLike[str],
    backend_library: str | os.PathLike[str] | list[str | os.PathLike[str]],
    executorch_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """Compile ``pte_runner`` into ``out_dir`` and copy the libraries it needs beside it.

    ``executorch_dir`` is an installed ``executorch`` package (default: the
    imported one), whose ``include/`` and ``lib/libexecutorch.so`` are used;
    ``backend_library`` is ``libexecutorch_backend_vulkan.so`` from a
    ``vkbench build full`` build (or a list: e.g. Vulkan and the
    wheel's XNNPACK library, to compare both on one machine). The wheel's core is built with the
    event tracer, so the runner always defines ``ET_EVENT_TRACER_ENABLED``
    (class layouts must match ``libexecutorch.so``); whether the *backend*
    writes QueryPool timestamps is decided by how the backend was built.
    """
    if executorch_dir is None:
        import executorch

        executorch_dir = Path(list(executorch.__path__)[0])  # a namespace package: no __file__
    et = Path(executorch_dir)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    core = et / "lib" / "libexecutorch.so"
    libraries = backend_library if isinstance(backend_library, list) else [backend_library]
    backends = [Path(b) for b in libraries]
    shutil.copy2(core, out / core.name)
    for backend in backends:
        shutil.copy2(backend, out / backend.name)
        for needed in _needed_libraries(backend):  # e.g. XNNPACK's libexecutorch_threadpool.so
            for folder in (backend.parent, et / "lib"):
                if (folder / needed).exists() and not (out / needed).exists():
                    shutil.copy2(folder / needed, out / needed)
    command = [
        os.environ.get("CXX", "g++"), "-O2", "-std=c++17",
        "-DC10_USING_CUSTOM_GENERATED_MACROS", "-DET_EVENT_TRACER_ENABLED",
        f"-I{et / 'include'}", f"-I{et / 'include/executorch/runtime/core/portable_type/c10'}",
        str(SOURCE), "-o", str(out / "pte_runner"),
        f"-L{out}", "-Wl,--no-as-needed", "-lexecutorch", *(str(out / b.name) for b in backends),
        f"-Wl,-rpath-link,{out}", "-Wl,-rpath,$ORIGIN",
    ]
    subprocess.run(command, check=True)
    return out / "pte_runner"


def _needed_libraries(library: Path) -> list[str]:
    """The ``DT_NEEDED`` entries of a shared library (from ``readelf -d``)."""
    dynamic = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True, check=True)
    lines = [line for line in dynamic.stdout.splitlines() if "(NEEDED)" in line]
    return [line.split("[", 1)[1].split("]", 1)[0] for line in lines]


def invoke_runner(
    runner: Path, args: list[str], timeout: float
) -> tuple[dict[str, Any], tuple[str, str] | None]:
    """Run ``runner args`` with its libraries on the path; ``(json, None)`` or ``({}, (stage, error))``.

    A timeout, a crash without a JSON line (the runtime aborted) and a JSON
    line with ``ok: false`` all come back as a failed stage, never raised:
    ``execute`` once the runner said it loaded the method (:data:`LOADED`), else ``load``.
    """
    try:
        result = subprocess.run([str(runner), *args], capture_output=True, text=True, timeout=timeout,
                                env=runner_environment(runner))
    except subprocess.TimeoutExpired as expired:
        out = expired.stdout or ""
        loaded = LOADED in (out.decode(errors="replace") if isinstance(out, bytes) else out)
        return {}, ("execute" if loaded else "load", f"timeout: runner took over {timeout:.0f}s")
    line = next((ln for ln in reversed(result.stdout.splitlines()) if ln.startswith("{")), None)
    if line is None:
        tail = [ln for ln in result.stderr.splitlines() if ln.strip()]
        stage = "execute" if LOADED in result.stdout else "load"
        said = runtime_error_line(result.stderr) or (tail[-1] if tail else "")
        return {}, (stage, f"crash (exit {result.returncode}): {said}")
    data = json.loads(line)
    if not data.get("ok"):
        return data, (data.get("stage", "execute"), named_error(data.get("error", ""), result.stderr))
    return data, None


def runner_environment(runner: Path) -> dict[str, str]:
    """This environment with the runner's folder (its libraries) first on ``LD_LIBRARY_PATH``."""
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(runner.parent), env.get("LD_LIBRARY_PATH")]))
    return env


#: An ExecuTorch log line at level Error or Fatal: ``E 00:00:00.001234 executorch:File.cpp:12] text``.
_ET_ERROR = re.compile(r"^[EF] \d\d:\d\d:\d\d\.\d+ executorch:(\S+\] .*)$")
#: Log lines that say only that something failed, not what: the line before them names it.
_GENERIC = ("Failed to", "Method load failed", "Init failed for backend", "Error: 0x")


def runtime_error_line(log: str) -> str:
    """The runtime's own words for a failure, from what it logged (stderr): the first ExecuTorch error
    line that names a cause (a ``VK_CHECK``'s file, line and condition, a missing operator), else the
    first error line, else "" (nothing logged)."""
    lines = [m.group(1).strip() for m in map(_ET_ERROR.match, log.splitlines()) if m]
    telling = [ln for ln in lines if not any(word in ln.split("] ", 1)[-1] for word in _GENERIC)]
    return (telling or lines or [""])[0][:400]


def named_error(error: str, log: str) -> str:
    """``error`` (what the caller saw: ``Method load failed: error 20``) with the runtime's own line
    from ``log`` after it, when it logged one that ``error`` does not already hold."""
    line = runtime_error_line(log)
    return f"{error}: {line}" if line and line not in error else error
