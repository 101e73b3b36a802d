"""Run lowered programs on the ExecuTorch runtime (``executorch.runtime``).

The PyPI wheel has no Vulkan runtime; a build from ``python -m vkbench.build
full`` has one. Everything here first asks the runtime whether
``VulkanBackend`` is registered and, when it is not, raises
``NotImplementedError`` with the reason (asv's "skip").

Programs are lowered by :func:`vkbench.lowering.lower` (``keep_program=True``),
the project's one lowering path; the ``.pte`` bytes are ``program.buffer``.

Partitioner texture limits: ``VKBENCH_TEXTURE_LIMITS="x,y,z"`` if set, else the
device's ``maxImageDimension3D`` read from ``vulkaninfo`` when it is below the
partitioner's default 16384 (Mesa lavapipe: 4096), else the default.

The step limit (largest ``n`` for which ``Many(n)`` executes) is found by
doubling then bisection (:func:`find_step_limit`); every probe runs in a fresh child process (``python -m
vkbench.runtime probe N``) with a freshly loaded program, so a probe that
aborts the process (a ``VK_CHECK`` that is not caught) is recorded as a
failure instead of ending the benchmark run.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vkbench import settings
from vkbench.compat import safe_import

_runtime = safe_import("executorch.runtime")

BACKEND = "VulkanBackend"
#: The partitioner's default texture limits.
DEFAULT_TEXTURE_LIMIT = 16384
#: ``Many(n)`` sizes measured by the runtime benchmarks.
MANY_SIZES = (500, 1000, 1500, 2000, 4000)
#: Knobs read on access (:mod:`vkbench.settings`), kept as module attributes because the
#: recorded asv classes read them: the step-limit search's upper end and its first size.
_LAZY = {"STEP_CAP": "VKBENCH_STEP_CAP", "STEP_START": "VKBENCH_STEP_START"}


def __getattr__(name: str) -> int:
    if name in _LAZY:
        return settings.integer(_LAZY[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- status


def backend_registry() -> Any:
    return _runtime.Runtime.get().backend_registry  # type: ignore[union-attr]


def runtime_import_error() -> str | None:
    """Why ``executorch.runtime`` did not import here, or None when it did."""
    if _runtime:
        return None
    try:
        _runtime.Runtime  # noqa: B018 - raises NotImplementedError with the import error
    except NotImplementedError as error:
        return str(error)
    return "executorch.runtime is unavailable"


def backend_registered(name: str) -> tuple[bool, str]:
    """``(registered, reason)`` for runtime backend ``name`` in this Python's runtime."""
    if (missing := runtime_import_error()) is not None:
        return False, missing
    try:
        registry = backend_registry()
        if registry.is_available(name):
            return True, f"{name} is registered"
        names = ", ".join(registry.registered_backend_names) or "none"
    except Exception as error:  # noqa: BLE001
        return False, f"executorch.runtime failed: {type(error).__name__}: {error}"
    return False, f"{name} is not registered in this executorch (registered: {names})"


def vulkan_registered() -> tuple[bool, str]:
    """``(registered, reason)`` for the Vulkan backend, saying how to get one."""
    registered, reason = backend_registered(BACKEND)
    if not reason.startswith(f"{BACKEND} is not registered"):  # registered, or no runtime at all
        return registered, reason
    return False, (f"no Vulkan runtime: {reason}; the PyPI wheel has none, build one with "
                   "`python -m vkbench.build full`")


@functools.lru_cache(maxsize=1)
def vulkan_devices() -> dict[str, Any]:
    """Devices ``vulkaninfo --summary`` lists (``available`` None without vulkaninfo)."""
    tool = shutil.which("vulkaninfo")
    if tool is None:
        return {"vulkaninfo": None, "available": None, "devices": [], "error": "vulkaninfo not on PATH"}
    try:
        result = subprocess.run([tool, "--summary"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        return {"vulkaninfo": tool, "available": None, "devices": [], "error": str(error)}
    devices: list[dict[str, str]] = []
    for block in re.split(r"\n(?=GPU\d+:)", result.stdout):
        name = re.search(r"deviceName\s*=\s*(.+)", block)
        if name:
            kind = re.search(r"deviceType\s*=\s*(\S+)", block)
            api = re.search(r"apiVersion\s*=\s*(\S+)", block)
            devices.append(
                {
                    "name": name.group(1).strip(),
                    "type": kind.group(1) if kind else "",
                    "api": api.group(1) if api else "",
                }
            )
    info: dict[str, Any] = {"vulkaninfo": tool, "available": bool(devices), "devices": devices}
    if result.returncode != 0 and not devices:
        info["error"] = (result.stderr.strip().splitlines() or [f"exit {result.returncode}"])[-1]
    return info


@functools.lru_cache(maxsize=1)
def device_max_image_3d() -> int | None:
    """Smallest ``maxImageDimension3D`` over the devices ``vulkaninfo`` reports."""
    tool = shutil.which("vulkaninfo")
    if tool is None:
        return None
    try:
        out = subprocess.run([tool], capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    values = [int(v) for v in re.findall(r"maxImageDimension3D\s*=\s*(\d+)", out)]
    return min(values) if values else None


def texture_limits() -> tuple[int, int, int] | None:
    """Texture limits to give the partitioner (None: its default)."""
    env = settings.text("VKBENCH_TEXTURE_LIMITS")
    if env:
        parts = [int(p) for p in re.split(r"[,x ]+", env) if p]
        if len(parts) == 1:
            parts *= 3
        if len(parts) != 3:
            raise ValueError(f"VKBENCH_TEXTURE_LIMITS must be 'x,y,z' or one number, got {env!r}")
        return (parts[0], parts[1], parts[2])
    limit = device_max_image_3d()
    if limit is not None and limit < DEFAULT_TEXTURE_LIMIT:
        return (limit, limit, limit)
    return None


def partitioner_options() -> dict[str, Any]:
    limits = texture_limits()
    return {"texture_limits": limits} if limits else {}


def vulkan_runtime_status() -> dict[str, Any]:
    """What ``vkbench doctor`` shows about running programs on Vulkan."""
    registered, reason = vulkan_registered()
    status: dict[str, Any] = {
        "vulkan_backend_registered": registered,
        "reason": reason,
        "backends": [],
    }
    try:
        status["backends"] = sorted(backend_registry().registered_backend_names)
    except Exception:  # noqa: BLE001
        pass
    try:
        from executorch import version

        status["executorch"] = version.__version__
    except Exception:  # noqa: BLE001
        status["executorch"] = None
    devices = vulkan_devices()
    status["vulkan_device_present"] = devices["available"]
    status["vulkan_devices"] = devices["devices"]
    status["vulkaninfo"] = devices["vulkaninfo"]
    if "error" in devices:
        status["vulkaninfo_error"] = devices["error"]
    status["runnable"] = bool(registered and devices["available"] is not False)
    return status


def require_vulkan_runtime() -> None:
    """Raise ``NotImplementedError`` (asv skip) unless VulkanBackend is registered."""
    registered, reason = vulkan_registered()
    if not registered:
        raise NotImplementedError(reason)


# --------------------------------------------------------------------------- running


def _pte_cache_path(n: int) -> Path | None:
    """Where ``VKBENCH_PTE_CACHE`` keeps ``Many(n)``'s .pte for this toolchain."""
    root = settings.text("VKBENCH_PTE_CACHE")
    if not root:
        return None
    import torch
    from executorch import version

    limits = "x".join(map(str, texture_limits() or ("default",)))
    et = f"{version.__version__}-{(version.git_version or '')[:10]}"
    key = f"many_{n}_et{et}_torch{torch.__version__}_tex{limits}"
    return Path(root) / (re.sub(r"[^A-Za-z0-9_.-]", "_", key) + ".pte")


def lower_many(n: int) -> tuple[Any, bytes]:
    """``(coverage, pte_bytes)`` for ``Many(n)`` lowered with the Vulkan partitioner.

    With ``VKBENCH_PTE_CACHE=DIR`` a .pte lowered before by the same
    executorch, torch and texture limits is reused (coverage is then None):
    lowering ``Many(n)`` takes minutes for n in the thousands.
    """
    from vkbench.graphs import Many
    from vkbench.lowering import lower

    cached = _pte_cache_path(n)
    if cached is not None and cached.exists():
        return None, cached.read_bytes()

    coverage, program = lower(
        Many(n), Many.example_inputs(), partitioner_options=partitioner_options(), keep_program=True
    )
    pte = bytes(program.buffer)
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pte)
        tmp.replace(cached)
    return coverage, pte


def load_method(pte: bytes, name: str = "forward", *, require_vulkan: bool = True) -> Any:
    """A freshly loaded method (a new Program each time: Program caches methods).

    ``require_vulkan=False`` loads programs for other backends (XNNPACK,
    portable), as the policy latency comparison does.
    """
    if require_vulkan:
        require_vulkan_runtime()
    elif not _runtime:
        raise NotImplementedError("executorch.runtime is unavailable")
    program = _runtime.Runtime.get().load_program(pte, verification=_runtime.Verification.Minimal)  # type: ignore[union-attr]
    method = program.load_method(name)
    method._vkbench_program = program  # keep the program (and its bytes) alive with the method
    return method


def many_input(seed: int = 0) -> Any:
    import torch

    generator = torch.Generator().manual_seed(seed)
    return torch.randn(1, 64, generator=generator)


def many_eager(n: int, x: Any) -> Any:
    import torch

    from vkbench.graphs import Many

    with torch.no_grad():
        return Many(n)(x)


def max_abs_diff(a: Any, b: Any) -> float:
    return float((a.float() - b.float()).abs().max())


@dataclass
class Probe:
    """One ``Many(n)`` run on the runtime: did it execute, and how close to eager."""

    n: int
    ok: bool = False
    stage: str = ""
    error: str = ""
    max_abs_diff: float = math.nan
    vulkan_programs: int = 0
    cpu_nodes: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def probe_many(n: int, save: str | os.PathLike[str] | None = None) -> Probe:
    """Lower, load and execute ``Many(n)`` in this process; never raises.

    ``save``: write the ``.pte`` there (before loading it).
    """
    probe = Probe(n)
    stage = "lower"
    try:
        start = time.perf_counter()
        coverage, pte = lower_many(n)
        if save is not None:
            Path(save).write_bytes(pte)
        probe.seconds["lower"] = round(time.perf_counter() - start, 3)
        if coverage is not None:
            probe.vulkan_programs = coverage.vulkan_programs
            probe.cpu_nodes = coverage.nodes_cpu
            probe.seconds.update({f"lower.{k}": v for k, v in coverage.seconds.items()})
        else:
            probe.vulkan_programs = -1  # from VKBENCH_PTE_CACHE: not counted
            probe.cpu_nodes = -1
        stage = "load"
        start = time.perf_counter()
        method = load_method(pte)
        probe.seconds["load"] = round(time.perf_counter() - start, 3)
        stage = "execute"
        x = many_input()
        start = time.perf_counter()
        out = method.execute([x])[0]
        probe.seconds["execute"] = round(time.perf_counter() - start, 4)
        probe.max_abs_diff = max_abs_diff(out, many_eager(n, x))
        probe.ok = math.isfinite(probe.max_abs_diff)
        if not probe.ok:
            probe.error = "non-finite output"
    except BaseException as error:  # noqa: BLE001 - a probe records every failure
        if isinstance(error, KeyboardInterrupt):
            raise
        probe.stage = stage
        probe.error = f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0]}"[:500]
    return probe


def child_env() -> dict[str, str]:
    """This environment with the checkout first on ``PYTHONPATH`` (for ``python -m vkbench...`` children)."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def probe_many_isolated(
    n: int, timeout: float | None = None, save: str | os.PathLike[str] | None = None
) -> Probe:
    """:func:`probe_many` in a child process (a crash or abort becomes a failed probe)."""
    if timeout is None:
        timeout = settings.number("VKBENCH_PROBE_TIMEOUT")
    command = [sys.executable, "-m", "vkbench.runtime", "probe", str(n)] + ([str(save)] if save else [])
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=child_env())
    except subprocess.TimeoutExpired:
        return Probe(n, stage="timeout", error=f"probe took over {timeout:.0f}s")
    for line in reversed(result.stdout.strip().splitlines()):
        if line.startswith("{"):
            data = json.loads(line)
            return Probe(**data)
    tail = [ln for ln in result.stderr.strip().splitlines() if ln.strip()]
    detail = next((ln for ln in reversed(tail) if "QueryPool" in ln or "Error" in ln or "error" in ln), None)
    return Probe(
        n, stage="crash", error=f"exit {result.returncode}: {(detail or (tail[-1] if tail else ''))[:500]}"
    )


@dataclass
class StepLimit:
    """Result of :func:`find_step_limit`: ``limit`` executes, ``limit + 1`` does not (or cap)."""

    cap: int
    limit: int
    probes: list[Probe]

    @property
    def short_of_cap(self) -> int:
        return self.cap - self.limit

    @property
    def first_failure(self) -> Probe | None:
        failing = [p for p in self.probes if not p.ok]
        return min(failing, key=lambda p: p.n) if failing else None


def find_step_limit(
    cap: int | None = None,
    *,
    start: int | None = None,
    resolution: int = 1,
    isolated: bool = True,
    log: Any = None,
    probe_fn: Callable[[int], Probe] | None = None,
) -> StepLimit:
    """Largest ``n <= cap`` for which ``Many(n)`` executes: gallop, then bisect.

    Lowering ``Many(n)`` costs super-linearly in ``n`` (minutes at n=2000 on a
    2-core machine), so the search climbs from ``start`` by doubling until a
    size fails (or ``cap`` runs), then bisects between the last size that ran
    and the first that failed. That is about log2(limit) probes, none much
    larger than the limit, each a fresh process with a freshly lowered and
    loaded program. Assumes monotonicity: if ``n`` runs, every smaller ``n``
    does. ``resolution`` > 1 stops the bisection once the bracket is that
    narrow (the limit is then exact to within ``resolution - 1`` steps, low).
    ``probe_fn`` replaces the Python-runtime probe (the native runner uses it).
    """
    cap = settings.integer("VKBENCH_STEP_CAP") if cap is None else cap
    start = settings.integer("VKBENCH_STEP_START") if start is None else start
    probe_fn = probe_fn or (probe_many_isolated if isolated else probe_many)
    probes: list[Probe] = []

    def check(n: int) -> bool:
        probe = probe_fn(n)
        probes.append(probe)
        if log:
            log(f"n={n}: {'ok' if probe.ok else 'FAIL ' + probe.stage + ': ' + probe.error} {probe.seconds}")
        return probe.ok

    good, n = 0, max(1, min(start, cap))
    while True:
        if not check(n):
            bad = n
            break
        good = n
        if n >= cap:
            return StepLimit(cap, cap, probes)
        n = min(2 * n, cap)
    while bad - good > max(1, resolution):
        mid = (good + bad) // 2
        if check(mid):
            good = mid
        else:
            bad = mid
    return StepLimit(cap, good, probes)


def main(argv: list[str] | None = None) -> int:
    """``python -m vkbench.runtime {status,probe,limit}``: the Python-runtime probes (JSON out)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m vkbench.runtime", description=main.__doc__)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("status", help="backends, Vulkan runtime and devices (the default)")
    probe = sub.add_parser("probe", help="lower, load and run Many(N) once")
    probe.add_argument("n", type=int)
    probe.add_argument("pte_out", nargs="?", default=None, help="also save the lowered program here")
    limit = sub.add_parser("limit", help="largest Many(n) that runs: gallop, then bisect")
    limit.add_argument("cap", type=int, nargs="?", default=None, help="default: $VKBENCH_STEP_CAP")
    limit.add_argument("start", type=int, nargs="?", default=None, help="default: $VKBENCH_STEP_START")
    limit.add_argument("resolution", type=int, nargs="?", default=1)
    args = parser.parse_args(argv)
    if args.command in (None, "status"):
        print(json.dumps(vulkan_runtime_status(), indent=2))
    elif args.command == "probe":
        import logging

        logging.disable(logging.INFO)
        print(json.dumps(probe_many(args.n, save=args.pte_out).to_json()), flush=True)
    else:
        result = find_step_limit(args.cap, start=args.start, resolution=args.resolution,
                                 log=lambda m: print(m, file=sys.stderr, flush=True))
        print(json.dumps({"cap": result.cap, "start": args.start or settings.integer("VKBENCH_STEP_START"),
                          "resolution": args.resolution, "limit": result.limit,
                          "short_of_cap": result.short_of_cap,
                          "probes": [p.to_json() for p in result.probes]}, indent=2))
    return 0

if __name__ == "__main__":
    sys.exit(main())
