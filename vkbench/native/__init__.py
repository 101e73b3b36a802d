"""Execute lowered ``Many(n)`` programs through ExecuTorch's C++ runtime alone.

Why a second way to run them: the Python runtime (``executorch.runtime``) of
the 1.5.1 wheel only executes beside the torch its ``_C`` was built against
(2.13, not the pinned 2.11), and a machine that cannot install that torch
(the H200 device machine: no network, 64 MiB per transfer) still runs the
wheel's ``libexecutorch.so`` and our Vulkan backend library.
``pte_runner.cpp`` links just those (plus any other backend or kernel
library named at build), loads a ``.pte``, executes it ``repeats + 1`` times
(the first is a warm-up) and checks the output against ``Many(n)`` computed in
float32 on the CPU; it prints one JSON line. :mod:`vkbench.native.policies`
runs other programs through its ``--io`` mode.

The ``.pte`` files are lowered elsewhere, by the one lowering path
(:func:`vkbench.runtime.lower_many`, kept in ``VKBENCH_PTE_CACHE``), and
found here by ``n`` in ``VKBENCH_PTE_DIR``.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
from pathlib import Path
from typing import Any

from vkbench import settings
from vkbench.runtime import Probe, StepLimit, find_step_limit

SOURCE = Path(__file__).with_name("pte_runner.cpp")
RUNNER_ENV = "VKBENCH_PTE_RUNNER"  # path to a built pte_runner (its libraries beside it)
PTE_DIR_ENV = "VKBENCH_PTE_DIR"  # folder of many_<n>.pte or many_<n>_<key>.pte files
REPEATS = 10
RUN_TIMEOUT = 300.0


def build_runner(
    out_dir: str | os.PathLike[str],
    backend_library: str | os.PathLike[str] | list[str | os.PathLike[str]],
    executorch_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """Compile ``pte_runner`` into ``out_dir`` and copy the libraries it needs beside it.

    ``executorch_dir`` is an installed ``executorch`` package (default: the
    imported one), whose ``include/`` and ``lib/libexecutorch.so`` are used;
    ``backend_library`` is ``libexecutorch_backend_vulkan.so`` from a
    ``python -m vkbench.build full`` build (or a list: e.g. Vulkan and the
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


def runner_path() -> Path | None:
    return settings.path(RUNNER_ENV)


def pte_dir() -> Path | None:
    return settings.path(PTE_DIR_ENV)


def find_pte(n: int, folder: Path | None = None) -> Path | None:
    """``many_<n>.pte``, or a ``VKBENCH_PTE_CACHE`` file ``many_<n>_<key>.pte``, in ``folder``."""
    folder = folder or pte_dir()
    if folder is None or not folder.is_dir():
        return None
    exact = folder / f"many_{n}.pte"
    if exact.exists():
        return exact
    keyed = sorted(folder.glob(f"many_{n}_*.pte"))
    return keyed[0] if keyed else None


def require_runner() -> Path:
    """The built runner, or ``NotImplementedError`` saying how to get one."""
    runner = runner_path()
    if runner is None or not runner.exists():
        raise NotImplementedError(f"no native runner: set {RUNNER_ENV} to a built pte_runner "
                                  f"(python -m vkbench.native build)")
    return runner


def require_native() -> tuple[Path, Path]:
    """The runner and ``Many(n)`` .pte folder, or ``NotImplementedError`` saying what is missing."""
    runner, folder = require_runner(), pte_dir()
    if folder is None or not folder.is_dir():
        raise NotImplementedError(f"no lowered programs: set {PTE_DIR_ENV} to a folder of many_<n>.pte")
    return runner, folder


def run_many(n: int, repeats: int = REPEATS, timeout: float = RUN_TIMEOUT) -> Probe:
    """Execute ``Many(n)``'s .pte ``repeats`` times in a fresh runner process; never raises.

    ``seconds`` holds ``load``, ``execute`` (median) and ``execute_min``; a
    missing .pte is stage ``missing`` (not a runtime failure: callers that
    search for a limit must not read it as one).
    """
    runner, folder = require_native()
    pte = find_pte(n, folder)
    if pte is None:
        return Probe(n, stage="missing", error=f"no many_{n}.pte in {folder}")
    data, failure = invoke_runner(runner, [str(pte), str(n), str(repeats)], timeout)
    if failure is not None:
        return Probe(n, stage=failure[0], error=failure[1][:500])
    times = data["execute_s"]
    return Probe(
        n, ok=True, max_abs_diff=float(data["max_abs_diff"]), vulkan_programs=-1, cpu_nodes=-1,
        seconds={"load": data["load_s"], "execute": statistics.median(times), "execute_min": min(times)},
    )


def invoke_runner(
    runner: Path, args: list[str], timeout: float = RUN_TIMEOUT
) -> tuple[dict[str, Any], tuple[str, str] | None]:
    """Run ``runner args`` with its libraries on the path; ``(json, None)`` or ``({}, (stage, error))``.

    A timeout, a crash without a JSON line (the runtime aborted) and a JSON
    line with ``ok: false`` all come back as a failed stage, never raised.
    """
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(runner.parent), env.get("LD_LIBRARY_PATH")]))
    try:
        result = subprocess.run([str(runner), *args], capture_output=True, text=True, timeout=timeout,
                                env=env)
    except subprocess.TimeoutExpired:
        return {}, ("timeout", f"runner took over {timeout:.0f}s")
    line = next((ln for ln in reversed(result.stdout.splitlines()) if ln.startswith("{")), None)
    if line is None:
        tail = [ln for ln in result.stderr.splitlines() if ln.strip()]
        return {}, ("crash", f"exit {result.returncode}: {tail[-1] if tail else ''}")
    data = json.loads(line)
    if not data.get("ok"):
        return data, (data.get("stage", "execute"), data.get("error", ""))
    return data, None


class MissingProgram(RuntimeError):
    """The search needed a size nobody lowered: the limit would be wrong, so stop."""


def find_native_step_limit(cap: int, start: int | None = None) -> StepLimit:
    """:func:`vkbench.runtime.find_step_limit` over pre-lowered programs, run natively.

    The sizes it visits are the ones the Python-runtime search visits for the
    same outcomes, so ``python -m vkbench.runtime limit`` with
    ``VKBENCH_PTE_CACHE`` set lowers every program this needs.
    """

    def probe(n: int) -> Probe:
        result = run_many(n, repeats=1)
        if result.stage == "missing":
            raise MissingProgram(result.error)
        return result

    return find_step_limit(cap, start=start, probe_fn=probe)


def main(argv: list[str] | None = None) -> int:
    """``python -m vkbench.native {build,run,limit}``: the C++ runner from the command line (JSON out)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m vkbench.native", description=main.__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="compile pte_runner against an ExecuTorch build")
    build.add_argument("out", help="folder for the runner and its libraries")
    build.add_argument("executorch_dir", help="the ExecuTorch install or build tree")
    build.add_argument("libs", nargs="+", metavar="LIB",
                       help="backend or kernel libraries to link (Vulkan's; the wheel's XNNPACK and "
                            "libexecutorch_kernels_optimized.so for programs with CPU ops)")
    run = sub.add_parser("run", help=f"run many_<n>.pte from ${PTE_DIR_ENV} with ${RUNNER_ENV}")
    run.add_argument("sizes", nargs="+", type=int, metavar="N")
    limit = sub.add_parser("limit", help="step-limit search over pre-lowered programs")
    limit.add_argument("cap", type=int)
    limit.add_argument("start", type=int, nargs="?", default=None, help="default: $VKBENCH_STEP_START")
    args = parser.parse_args(argv)
    if args.command == "build":
        print(build_runner(args.out, list(args.libs), args.executorch_dir))
    elif args.command == "run":
        for n in args.sizes:
            print(json.dumps(run_many(n).to_json()), flush=True)
    else:
        result = find_native_step_limit(args.cap, args.start)
        print(json.dumps({"cap": result.cap, "limit": result.limit,
                          "probes": [p.to_json() for p in result.probes]}))
    return 0
