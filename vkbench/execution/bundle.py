"""A prepared workload: lowered programs, inputs and eager outputs, in memory or on disk.

Preparing needs torch, lerobot and executorch's Python (build, export,
lower); executing needs only a runner. :class:`Bundle` is the line between
the two: the Python runner executes a bundle made in the same process, the
C++ runner executes one saved here and carried to a machine that has none of
those packages (the H200 device), and both compare against the same eager
outputs.

Workloads are named ``many/<n>`` (:class:`vkbench.workloads.graphs.Many`, ``n`` steps of
2 dispatches), ``probe/<name>`` (an op probe of :mod:`vkbench.workloads.probes`) or by a
policy entry (``act/model``). A program with nothing delegated to the backend
asked for is a ``partition`` failure: running it would measure the CPU. Every backend is lowered
by :func:`vkbench.core.lowering.lower_allowing_non_core` (the one lowering path;
an op outside Core ATen goes to the CPU, as a user would configure it), for
Vulkan with the device's texture limits.

On disk, ``<folder>/<slug>/`` holds ``bundle.json`` (workload, toolchain, the
lowering outcome per backend), ``<backend>.pte``, ``input_<i>.npy`` and
``expected_<i>.npy``. With ``VKBENCH_BUNDLES=DIR`` :func:`prepare` keeps
bundles there and reuses one made by the same toolchain, or any one where
this Python cannot lower (lowering ``Many(4000)`` takes half an hour on 2 cores);
where it cannot lower and nothing was saved, the stage is ``missing``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vkbench import settings
from vkbench.core.failures import typed_error_line
from vkbench.execution.outcome import Outcome

MANIFEST = "bundle.json"
#: The stage of a workload that was neither saved nor preparable here (says nothing about the backend).
MISSING = "missing"
#: Lowering targets (the asv grid is fixed to these).
BACKENDS = ("vulkan", "xnnpack", "portable")


@dataclass
class Bundle:
    """One workload, ready to execute: a program per backend that lowered, inputs, eager outputs."""

    workload: str
    inputs: list[Any] = field(default_factory=list)  #: numpy arrays, torch.export's input order
    expected: list[Any] = field(default_factory=list)  #: numpy arrays, eager's flattened outputs
    programs: dict[str, bytes] = field(default_factory=dict)
    #: Per backend: lowering counts and times, or the stage where building or lowering failed.
    lowering: dict[str, Outcome] = field(default_factory=dict)
    toolchain: str = ""

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Write the bundle under ``folder/<slug>/``; returns that directory."""
        import numpy as np

        out = Path(folder) / slug(self.workload)
        out.mkdir(parents=True, exist_ok=True)
        for backend, pte in self.programs.items():
            _write_atomically(out / f"{backend}.pte", pte)
        for kind, arrays in (("input", self.inputs), ("expected", self.expected)):
            for index, array in enumerate(arrays):
                np.save(out / f"{kind}_{index}.npy", array)
        manifest = {"workload": self.workload, "toolchain": self.toolchain, "inputs": len(self.inputs),
                    "expected": len(self.expected),
                    "lowering": {b: o.to_json() for b, o in self.lowering.items()}}
        _write_atomically(out / MANIFEST, json.dumps(manifest, indent=2).encode())
        return out

    @classmethod
    def load(cls, folder: str | os.PathLike[str], workload: str) -> Bundle | None:
        """The bundle saved for ``workload`` under ``folder``, or None."""
        import numpy as np

        source = Path(folder) / slug(workload)
        if not (source / MANIFEST).is_file():
            return None
        manifest = json.loads((source / MANIFEST).read_text())
        lowering = {b: Outcome.from_json(o) for b, o in manifest["lowering"].items()}
        return cls(
            workload,
            inputs=[np.load(source / f"input_{i}.npy") for i in range(manifest["inputs"])],
            expected=[np.load(source / f"expected_{i}.npy") for i in range(manifest["expected"])],
            programs={b: (source / f"{b}.pte").read_bytes() for b in lowering
                      if (source / f"{b}.pte").is_file()},
            lowering=lowering,
            toolchain=manifest.get("toolchain", ""),
        )


def slug(workload: str) -> str:
    return workload.replace("/", "__")


def _write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(f"{path.suffix}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def many_input(seed: int = 0) -> Any:
    """``Many(n)``'s input: a seeded ``(1, 64)`` normal tensor."""
    import torch

    return torch.randn(1, 64, generator=torch.Generator().manual_seed(seed))


def build(workload: str) -> tuple[Any, tuple[Any, ...]]:
    """``(module, example inputs)`` of a workload name (``KeyError`` when there is none)."""
    if workload.startswith("many/"):
        from vkbench.workloads.graphs import Many

        return Many(int(workload.split("/", 1)[1])).eval(), (many_input(),)
    if workload.startswith("probe/"):
        from vkbench.workloads.probes import build_probe

        return build_probe(workload.split("/", 1)[1])
    from vkbench.workloads.policies import ENTRIES

    if workload not in ENTRIES:
        raise KeyError(f"{workload} is neither many/<n>, probe/<name> nor a policy entry")
    return ENTRIES[workload].build()


def toolchain() -> str:
    """What a lowered program depends on: executorch, torch, texture limits ("" when unknown)."""
    try:
        import torch
        from executorch import version

        from vkbench.execution import device
    except Exception:  # noqa: BLE001 - a machine that cannot lower has no toolchain
        return ""
    limits = "x".join(map(str, device.texture_limits() or ("default",)))
    return f"et{version.__version__}-{(version.git_version or '')[:10]}_torch{torch.__version__}_tex{limits}"


def flat_arrays(values: Any) -> list[Any]:
    """The tensors of a (nested) structure, in ``torch.export``'s order, as numpy arrays."""
    import torch
    from torch.utils import _pytree

    return [v.detach().contiguous().numpy() for v in _pytree.tree_flatten(values)[0]
            if isinstance(v, torch.Tensor)]


def prepare(workload: str, backends: tuple[str, ...] | list[str] = BACKENDS, *,
            delegate_only: Collection[str] | None = None) -> Bundle:
    """Build, run eagerly and lower ``workload`` for each backend; never raises for a failure.

    With ``VKBENCH_BUNDLES`` set, a saved bundle holding every backend asked
    for is reused (see the module doc) and a new one is saved there.
    ``delegate_only`` lets the Vulkan partitioner take only those operator
    types (:mod:`vkbench.execution.culprit`); such a bundle is neither reused nor saved.
    """
    folder = settings.path("VKBENCH_BUNDLES") if delegate_only is None else None
    here = toolchain()
    if folder is not None:
        saved = Bundle.load(folder, workload)
        reusable = saved is not None and (not here or saved.toolchain == here)
        if reusable and set(backends) <= set(saved.lowering):  # type: ignore[union-attr]
            return saved  # type: ignore[return-value]
    if not here:  # no executorch here: a bundle saved elsewhere is the only way to a program
        where = f"in {folder}" if folder is not None else "(VKBENCH_BUNDLES is unset)"
        reason = f"no saved bundle for {workload} {where}, and this Python cannot lower (no executorch)"
        missing = {b: Outcome(workload, b, "").fail(MISSING, reason) for b in backends}
        return Bundle(workload, lowering=missing)
    bundle = _prepare(workload, tuple(backends), here, delegate_only)
    if folder is not None and bundle.inputs:
        bundle.save(folder)
    return bundle


def _prepare(workload: str, backends: tuple[str, ...], here: str,
             delegate_only: Collection[str] | None = None) -> Bundle:
    import torch

    from vkbench.core.lowering import export_program, fresh_copy, lower_allowing_non_core
    from vkbench.execution import device

    bundle = Bundle(workload, toolchain=here)
    try:
        start = time.perf_counter()
        module, inputs = build(workload)
        with torch.no_grad():
            expected = module(*inputs)
        build_s = round(time.perf_counter() - start, 3)
        bundle.inputs, bundle.expected = flat_arrays(inputs), flat_arrays(expected)
    except Exception as error:  # noqa: BLE001 - the reason is the answer
        line = typed_error_line(error)
        bundle.lowering = {b: Outcome(workload, b, "").fail("build", line) for b in backends}
        return bundle
    start = time.perf_counter()
    try:  # once here: it says whether every backend stops at export
        exported = export_program(module, inputs)
    except Exception as error:  # noqa: BLE001 - every backend stops at export
        line = getattr(error, "first_line", None) or typed_error_line(error)
        stage = getattr(error, "stage", "export")
        bundle.lowering = {b: Outcome(workload, b, "", seconds={"build": build_s}).fail(stage, line)
                           for b in backends}
        return bundle
    export_s = time.perf_counter() - start
    for index, backend in enumerate(backends):
        outcome = Outcome(workload, backend, "", seconds={"build": build_s})
        bundle.lowering[backend] = outcome
        start = time.perf_counter()
        try:
            # a program of its own per lowering: to_edge can leave unbacked symbols pending on the
            # one it lowered (bug row to_edge_pending_unbacked_retry)
            own = exported if index == 0 else fresh_copy(exported)
            vulkan = {"partitioner_options": device.partitioner_options(),
                      "delegate_only": delegate_only} if backend == "vulkan" else {}
            coverage, program, retry = lower_allowing_non_core(
                None, (), exported=own, backend=backend, keep_program=True, **vulkan)
        except Exception as error:  # noqa: BLE001 - bookkeeping failures still make an outcome
            outcome.fail(getattr(error, "stage", "lower"), typed_error_line(error))
            continue
        outcome.seconds["lower"] = round(export_s + time.perf_counter() - start, 3)
        if coverage is None:
            error = retry.last_error or retry.default_error
            outcome.fail(error.stage, f"{error.error_type}: {error.first_line}")  # type: ignore[union-attr]
            continue
        outcome.seconds.update({f"lower.{k}": v for k, v in coverage.seconds.items()})
        outcome.seconds["lower.export"] = round(export_s, 4)  # shared by every backend's lowering
        outcome.delegate_calls = coverage.vulkan_programs
        outcome.nodes_total, outcome.nodes_cpu = coverage.nodes_total, coverage.nodes_cpu
        if backend != "portable" and not coverage.vulkan_programs:  # it would run, but not on `backend`
            outcome.fail("partition", f"nothing delegated to {backend}: "
                                      f"all {coverage.nodes_cpu} nodes on the CPU")
            continue
        pte = bytes(program.buffer)
        outcome.program_bytes = len(pte)
        outcome.ok = True  # lowered; the runner takes it from here
        bundle.programs[backend] = pte
    return bundle
