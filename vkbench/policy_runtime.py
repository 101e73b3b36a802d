"""Policy entries on the ExecuTorch runtime: Vulkan against the CPU backends.

Lowering coverage (``vkbench policies``) says how much of a policy the Vulkan
partitioner takes; it does not say whether the delegated program is faster
than what ExecuTorch would run on the CPU anyway, or whether it computes the
same numbers. This module answers both for the entries that lower fully or
mostly to Vulkan: each entry is built once (random weights, offline), lowered
by :func:`vkbench.lowering.lower` for ``vulkan``, ``xnnpack`` and ``portable``
(the same exported computation through the one lowering path), loaded with
``executorch.runtime``, executed, compared with eager PyTorch (largest
absolute difference over every float output) and timed (``method.execute``,
median of several runs after a warm-up). ``eager`` is the PyTorch baseline.

Nothing here raises out of a measurement: a failure is a :class:`Run` with
the stage (``build``, ``runtime``, a lowering stage, ``load``, ``execute``,
``compare``, ``crash``, ``timeout``) and the error's first line. A Vulkan
``VK_CHECK`` can abort the process, so :func:`measure_isolated` runs an entry
in a child process and turns an abort into a failed run.

Vulkan lowering uses the device's texture limits
(:func:`vkbench.runtime.partitioner_options`: lavapipe's 3D limit is 4096).

``python -m vkbench.policy_runtime [ENTRY...] [--backend B ...] [--json]``
prints the table (or JSON with the environment) for :data:`DEFAULT_ENTRIES`.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vkbench import runtime as rt
from vkbench import settings
from vkbench.failures import first_error_line

#: Lowering targets compared here (``vkbench.lowering.BACKENDS``, fixed so the grid never changes).
BACKENDS = ("vulkan", "xnnpack", "portable")
#: The eager PyTorch baseline (not an ExecuTorch program).
EAGER = "eager"
#: Fast entries that lower fully or mostly to Vulkan (act/model: 5 CPU nodes of 1812).
DEFAULT_ENTRIES = ("act/model", "tdmpc/encoder", "tdmpc/pi", "tdmpc/dynamics", "tdmpc/q")
#: Runtime backend each lowering target needs registered (portable needs none).
RUNTIME_BACKEND = {"vulkan": rt.BACKEND, "xnnpack": "XnnpackBackend", "portable": None}


def timing() -> dict[str, float]:
    """At least ``min_repeats`` executes, more while under ``budget_s``, at most ``max_repeats``
    (``VKBENCH_MIN_REPEATS`` / ``VKBENCH_MAX_REPEATS`` / ``VKBENCH_TIME_BUDGET_S``)."""
    return {"min_repeats": settings.integer("VKBENCH_MIN_REPEATS"),
            "max_repeats": settings.integer("VKBENCH_MAX_REPEATS"),
            "budget_s": settings.number("VKBENCH_TIME_BUDGET_S")}


def _first_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {first_error_line(error)}"[:500]


@dataclass
class Run:
    """One entry on one backend: did it run, how fast, and how close to eager."""

    entry: str
    backend: str
    ok: bool = False
    stage: str = ""
    error: str = ""
    #: Median and fastest ``method.execute`` (or eager forward) in milliseconds.
    forward_ms: float | None = None
    forward_ms_min: float | None = None
    repeats: int = 0
    #: Largest absolute difference from eager over all float outputs.
    max_abs_diff: float | None = None
    float_outputs: int = 0
    #: From the lowering: delegate calls of ``backend`` and compute nodes left on the CPU.
    delegate_calls: int | None = None
    nodes_total: int | None = None
    nodes_cpu: int | None = None
    program_bytes: int | None = None
    seconds: dict[str, float] = field(default_factory=dict)

    def fail(self, stage: str, error: BaseException | str) -> Run:
        self.ok = False
        self.stage = stage
        self.error = error if isinstance(error, str) else _first_line(error)
        return self

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------- readiness


@functools.cache
def executes_programs() -> tuple[bool, str]:
    """Can this Python's ExecuTorch runtime execute a program at all?

    The PyPI executorch 1.5.1 wheel with torch 2.11 cannot (``tensor does not
    have a device``: its ``_C`` was built against another torch), so every
    runtime number would be a failure for the same reason; this asks once,
    with a portable ``x * 2 + 1``, and says why not.
    """
    if (missing := rt.runtime_import_error()) is not None:
        return False, missing
    try:
        import torch

        from vkbench.lowering import lower

        class Affine(torch.nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return x * 2 + 1

        x = torch.arange(4, dtype=torch.float32)
        _, program = lower(Affine(), (x,), backend="portable", keep_program=True)
        out = rt.load_method(bytes(program.buffer), require_vulkan=False).execute([x])[0]
        if not torch.equal(out, x * 2 + 1):
            return False, f"the runtime executes but computes x*2+1 wrong: {out.tolist()}"
    except Exception as error:  # noqa: BLE001 - the reason is the answer
        return (
            False,
            f"this executorch runtime cannot execute programs (portable x*2+1): {_first_line(error)}",
        )
    return True, "the runtime executes programs"


def runtime_ready(backend: str) -> tuple[bool, str]:
    """``(ready, reason)``: can programs lowered for ``backend`` run in this Python?"""
    if backend == EAGER:
        return True, "eager PyTorch"
    if backend not in RUNTIME_BACKEND:
        return False, f"unknown backend {backend!r}"
    if backend == "vulkan":
        registered, reason = rt.vulkan_registered()
        if not registered:
            return False, reason
        if rt.vulkan_devices()["available"] is False:
            return False, f"no Vulkan device: {rt.vulkan_devices().get('error', 'vulkaninfo lists none')}"
    elif RUNTIME_BACKEND[backend]:
        registered, reason = rt.backend_registered(RUNTIME_BACKEND[backend])
        if not registered:
            return False, reason
    return executes_programs()


# --------------------------------------------------------------------------- measuring


def flat_tensors(values: Any) -> list[Any]:
    """The tensors of a (nested) input/output structure, in ``torch.export``'s order."""
    import torch
    from torch.utils import _pytree

    return [v for v in _pytree.tree_flatten(values)[0] if isinstance(v, torch.Tensor)]


def compare(outputs: Sequence[Any], expected: Any) -> tuple[float, int]:
    """``(max abs diff, float outputs compared)`` of runtime ``outputs`` against eager ``expected``.

    Raises ``ValueError`` when the output lists do not line up.
    """
    want = flat_tensors(expected)
    got = [o for o in outputs if hasattr(o, "shape")]
    if len(got) != len(want):
        raise ValueError(f"{len(got)} tensor outputs, eager has {len(want)}")
    worst, count = 0.0, 0
    for index, (a, b) in enumerate(zip(got, want, strict=True)):
        if tuple(a.shape) != tuple(b.shape):
            raise ValueError(f"output {index}: shape {tuple(a.shape)}, eager {tuple(b.shape)}")
        if not b.is_floating_point():
            continue
        count += 1
        if b.numel():
            worst = max(worst, float((a.double() - b.double()).abs().max()))
    return worst, count


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


def _timed(run: Run, samples: list[float]) -> None:
    run.forward_ms = round(1000 * statistics.median(samples), 4)
    run.forward_ms_min = round(1000 * min(samples), 4)
    run.repeats = len(samples)


def lower_for(module: Any, inputs: tuple[Any, ...], backend: str) -> tuple[Any, bytes]:
    """``(coverage, pte)`` of ``module`` lowered for ``backend`` (fresh export each time)."""
    from vkbench.lowering import lower

    options = rt.partitioner_options() if backend == "vulkan" else None
    coverage, program = lower(module, inputs, backend=backend, partitioner_options=options, keep_program=True)
    return coverage, bytes(program.buffer)


def _measure_backend(run: Run, module: Any, inputs: tuple[Any, ...], expected: Any, save: Path | None) -> Run:
    from vkbench.lowering import LoweringError

    ready, reason = runtime_ready(run.backend)
    if not ready:
        return run.fail("runtime", reason)
    stage = "lower"
    try:
        start = time.perf_counter()
        coverage, pte = lower_for(module, inputs, run.backend)
        run.seconds["lower"] = round(time.perf_counter() - start, 3)
        run.delegate_calls = coverage.vulkan_programs
        run.nodes_total, run.nodes_cpu = coverage.nodes_total, coverage.nodes_cpu
        run.program_bytes = len(pte)
        if save is not None:
            save.write_bytes(pte)
        stage = "load"
        start = time.perf_counter()
        method = rt.load_method(pte, require_vulkan=False)
        run.seconds["load"] = round(time.perf_counter() - start, 3)
        stage = "execute"
        args = flat_tensors(inputs)
        start = time.perf_counter()
        outputs = list(method.execute(args))
        run.seconds["first_execute"] = round(time.perf_counter() - start, 4)
        stage = "compare"
        run.max_abs_diff, run.float_outputs = compare(outputs, expected)
        if not math.isfinite(run.max_abs_diff):
            return run.fail("compare", "non-finite output")
        stage = "execute"
        _timed(run, time_calls(lambda: method.execute(args)))
    except LoweringError as error:
        return run.fail(error.stage, str(error).split(": ", 1)[-1])
    except Exception as error:  # noqa: BLE001 - a run records every failure
        return run.fail(stage, error)
    run.ok = True
    return run


def measure(
    entry_name: str,
    backends: Sequence[str] = (EAGER, *BACKENDS),
    *,
    save_dir: str | os.PathLike[str] | None = None,
    report: Callable[[Run], None] | None = None,
) -> list[Run]:
    """Measure one entry on each of ``backends`` in this process; never raises.

    ``save_dir``: write each lowered program there as ``<backend>.pte``.
    ``report`` is called with each finished run (the child process streams them).
    """
    import torch

    from vkbench.policies import ENTRIES

    runs = [Run(entry_name, backend) for backend in backends]

    def done(run: Run) -> None:
        if report:
            report(run)

    entry = ENTRIES.get(entry_name)
    try:
        if entry is None:
            raise KeyError(f"{entry_name} is not a policy entry")
        start = time.perf_counter()
        module, inputs = entry.build()
        build_s = round(time.perf_counter() - start, 3)
        with torch.no_grad():
            expected = module(*inputs)
    except Exception as error:  # noqa: BLE001
        for run in runs:
            done(run.fail("build", error))
        return runs
    for run in runs:
        run.seconds["build"] = build_s
        if run.backend == EAGER:
            try:
                with torch.no_grad():
                    _timed(run, time_calls(lambda: module(*inputs)))
                run.ok, run.max_abs_diff = True, 0.0
                run.float_outputs = sum(1 for t in flat_tensors(expected) if t.is_floating_point())
            except Exception as error:  # noqa: BLE001
                run.fail("eager", error)
        elif run.backend not in BACKENDS:
            run.fail("runtime", f"unknown backend {run.backend!r}; choose from {', '.join(BACKENDS)}")
        else:
            save = Path(save_dir) / f"{run.backend}.pte" if save_dir is not None else None
            _measure_backend(run, module, inputs, expected, save)
        done(run)
    return runs


def measure_isolated(
    entry_name: str,
    backends: Sequence[str] = (EAGER, *BACKENDS),
    *,
    save_dir: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
) -> list[Run]:
    """:func:`measure` in a child process: an abort or a hang becomes a failed run.

    The child prints one JSON line per finished run, so runs that finished
    before a crash keep their results; the rest get stage ``crash``/``timeout``.
    """
    command = [sys.executable, "-m", "vkbench.policy_runtime", entry_name, "--jsonl", "--backend", *backends]
    if save_dir is not None:
        command += ["--save-dir", str(save_dir)]
    if timeout is None:
        timeout = settings.number("VKBENCH_ENTRY_TIMEOUT")
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=rt.child_env())
        stdout, failure = result.stdout, None
    except subprocess.TimeoutExpired as expired:
        out = expired.stdout or ""
        stdout = out.decode(errors="replace") if isinstance(out, bytes) else out
        failure, result = ("timeout", f"entry took over {timeout:.0f}s"), None
    finished: dict[str, Run] = {}
    for line in stdout.splitlines():
        if line.startswith("{"):
            data = json.loads(line)
            finished[data["backend"]] = Run(**data)
    if failure is None and result is not None:
        tail = [ln for ln in result.stderr.strip().splitlines() if ln.strip()]
        detail = next((ln for ln in reversed(tail) if "Error" in ln or "error" in ln or "VK_" in ln), None)
        failure = ("crash", f"exit {result.returncode}: {(detail or (tail[-1] if tail else ''))[:500]}")
    return [finished.get(b) or Run(entry_name, b).fail(*failure) for b in backends]  # type: ignore[misc]


# --------------------------------------------------------------------------- report


def environment() -> dict[str, Any]:
    """What the numbers depend on: versions, device, texture limits, machine, date."""
    import torch

    env: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "python_prefix": sys.prefix,
        "torch": torch.__version__,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }
    try:
        from executorch import version

        env["executorch"] = version.__version__
        env["executorch_git"] = version.git_version
    except Exception:  # noqa: BLE001
        env["executorch"] = None
    try:
        from importlib import metadata

        env["lerobot"] = metadata.version("lerobot")
    except Exception:  # noqa: BLE001
        env["lerobot"] = None
    try:
        import torchvision

        env["torchvision"] = torchvision.__version__
    except Exception:  # noqa: BLE001
        env["torchvision"] = None
    status = rt.vulkan_runtime_status()
    env["runtime_backends"] = status["backends"]
    env["vulkan_backend_registered"] = status["vulkan_backend_registered"]
    env["vulkan_devices"] = status["vulkan_devices"]
    env["texture_limits"] = rt.texture_limits()
    env["executes_programs"] = list(executes_programs())
    env["timing"] = timing()
    return env


HEADERS = ("entry", "backend", "status", "forward ms (median)", "max abs diff", "delegates", "cpu nodes")


def _fmt(value: float | None, digits: str) -> str:
    return "-" if value is None else format(value, digits)


def table_rows(runs: Sequence[Run]) -> list[list[str]]:
    rows = []
    for run in runs:
        status = "ok" if run.ok else f"{run.stage}: {run.error}"
        cpu = "-" if run.nodes_cpu is None else f"{run.nodes_cpu}/{run.nodes_total}"
        delegates = "-" if run.delegate_calls is None else str(run.delegate_calls)
        rows.append(
            [
                run.entry,
                run.backend,
                status,
                _fmt(run.forward_ms, ".3f"),
                _fmt(run.max_abs_diff, ".3g"),
                delegates,
                cpu,
            ]
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    """``python -m vkbench.policy_runtime [ENTRY...] [--backend B ...] [--json|--markdown]``."""
    from vkbench import tables

    parser = argparse.ArgumentParser(
        prog="python -m vkbench.policy_runtime", description=__doc__.split("\n")[0]
    )
    parser.add_argument("entries", nargs="*", help=f"policy entries (default: {' '.join(DEFAULT_ENTRIES)})")
    parser.add_argument("--backend", nargs="+", default=[EAGER, *BACKENDS], choices=[EAGER, *BACKENDS])
    parser.add_argument("--json", action="store_true", help="JSON with the environment")
    parser.add_argument("--markdown", action="store_true", help="a markdown table")
    parser.add_argument("--out", help="also write the JSON there")
    parser.add_argument("--in-process", action="store_true", help="no child process per entry")
    parser.add_argument("--save-dir", help=argparse.SUPPRESS)
    parser.add_argument("--jsonl", action="store_true", help=argparse.SUPPRESS)  # child mode
    args = parser.parse_args(argv)

    import logging

    logging.disable(logging.INFO)
    report = sys.stdout
    # lerobot prints model sizes on stdout while building; keep stdout for the report alone.
    with contextlib.redirect_stdout(sys.stderr):
        if args.jsonl:  # one entry, in this process, one line per run (see measure_isolated)
            name = args.entries[0] if args.entries else DEFAULT_ENTRIES[0]
            measure(
                name,
                args.backend,
                save_dir=args.save_dir,
                report=lambda run: print(json.dumps(run.to_json()), file=report, flush=True),
            )
            return 0
        runs: list[Run] = []
        for name in args.entries or DEFAULT_ENTRIES:
            print(f"  {name} ...", file=sys.stderr, flush=True)
            if args.in_process:
                runs += measure(name, args.backend)
            else:
                with tempfile.TemporaryDirectory() as tmp:
                    runs += measure_isolated(name, args.backend, save_dir=tmp)
            for run in runs[-len(args.backend) :]:
                print("    " + "  ".join(table_rows([run])[0][1:]), file=sys.stderr, flush=True)
        data = {"environment": environment(), "runs": [run.to_json() for run in runs]}
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(data, indent=2) + "\n")
    if args.json:
        print(json.dumps(data, indent=2))
    elif args.markdown:
        print(tables.markdown(HEADERS, table_rows(runs)))
    else:
        print(tables.render(HEADERS, table_rows(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
