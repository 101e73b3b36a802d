"""Policy programs through the C++ runner: lowered and checked here, executed anywhere.

The device machine can run ``pte_runner`` but not lerobot, torch 2.13 or the
executorch Python package. So the policy entries are prepared where they can
be: :func:`export_policy_io` builds each entry (seeded, random weights),
computes eager PyTorch's outputs, lowers it for each backend through the one
lowering path (:func:`vkbench.policy_runtime.lower_for`) and writes a folder
per entry: ``<backend>.pte``, ``input_<i>.bin`` (raw tensor bytes, in
``torch.export``'s input order) and ``expected_<i>.npy``. :func:`run_policy`
then needs only numpy and the runner: it executes the program on those inputs
and compares the outputs with the saved eager ones.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

from vkbench import settings
from vkbench.native import invoke_runner, require_runner

IO_ENV = "VKBENCH_POLICY_IO"  # folder written by export_policy_io
BACKENDS = ("vulkan", "xnnpack", "portable")
MANIFEST = "manifest.json"
#: ExecuTorch ScalarType codes -> numpy dtype names (the ones policies produce).
SCALAR_TYPES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32",
                7: "float64", 11: "bool"}


def slug(entry: str) -> str:
    return entry.replace("/", "__")


def io_dir() -> Path | None:
    return settings.path(IO_ENV)


def export_policy_io(entries: list[str], out_dir: str | os.PathLike[str],
                     backends: tuple[str, ...] = BACKENDS) -> dict[str, Any]:
    """Write each entry's programs, inputs and eager outputs; returns (and saves) the manifest."""
    import numpy as np
    import torch

    from vkbench.policies import ENTRIES
    from vkbench.policy_runtime import flat_tensors, lower_for

    out = Path(out_dir)
    manifest: dict[str, Any] = {}
    for entry in entries:
        folder = out / slug(entry)
        folder.mkdir(parents=True, exist_ok=True)
        module, inputs = ENTRIES[entry].build()
        with torch.no_grad():
            expected = flat_tensors(module(*inputs))
        for index, tensor in enumerate(flat_tensors(inputs)):
            (folder / f"input_{index}.bin").write_bytes(tensor.contiguous().numpy().tobytes())
        for index, tensor in enumerate(expected):
            np.save(folder / f"expected_{index}.npy", tensor.detach().numpy())
        record: dict[str, Any] = {"outputs": len(expected), "backends": {}}
        for backend in backends:
            try:
                coverage, pte = lower_for(module, inputs, backend)
            except Exception as error:  # noqa: BLE001 - recorded per backend
                record["backends"][backend] = {"ok": False, "stage": getattr(error, "stage", "lower"),
                                               "error": str(error).splitlines()[0][:300]}
                continue
            (folder / f"{backend}.pte").write_bytes(pte)
            record["backends"][backend] = {"ok": True, "delegate_calls": coverage.vulkan_programs,
                                           "nodes_cpu": coverage.nodes_cpu,
                                           "nodes_total": coverage.nodes_total}
        manifest[entry] = record
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2))
    return manifest


def run_policy(entry: str, backend: str, folder: Path | None = None, repeats: int = 10) -> dict[str, Any]:
    """Execute ``entry``'s ``backend`` program natively; never raises for a failed run.

    Returns ``ok``, ``stage``/``error`` or ``forward_s`` (median), ``forward_min_s``,
    ``load_s`` and ``max_abs_diff`` (over float outputs, against eager).
    """
    import numpy as np

    runner = require_runner()
    root = folder or io_dir()
    if root is None:
        raise NotImplementedError(f"no policy programs: set {IO_ENV} "
                                  "(python -m vkbench.native.policies export)")
    source = root / slug(entry)
    pte = source / f"{backend}.pte"
    if not pte.exists():
        manifest = json.loads((root / MANIFEST).read_text()) if (root / MANIFEST).exists() else {}
        failed = manifest.get(entry, {}).get("backends", {}).get(backend)
        if failed and not failed.get("ok"):
            return {"ok": False, "stage": failed["stage"], "error": failed["error"]}
        return {"ok": False, "stage": "missing", "error": f"no {pte}"}
    with tempfile.TemporaryDirectory() as work:
        for path in source.glob("input_*.bin"):
            shutil.copy2(path, Path(work) / path.name)
        data, failure = invoke_runner(runner, [str(pte), "--io", work, str(repeats)])
        if failure is not None:
            return {"ok": False, "stage": failure[0], "error": failure[1]}
        worst = 0.0
        for output in data["outputs"]:
            expected = np.load(source / f"expected_{output['index']}.npy")
            got = np.fromfile(Path(work) / f"output_{output['index']}.bin",
                              dtype=SCALAR_TYPES.get(output["dtype"], "uint8"))
            if got.size != expected.size:
                return {"ok": False, "stage": "compare",
                        "error": f"output {output['index']}: {got.size} values, eager has {expected.size}"}
            if expected.dtype.kind == "f" and expected.size:
                diff = np.abs(got.astype(np.float64) - expected.reshape(-1).astype(np.float64)).max()
                worst = max(worst, float(diff))
    times = data["execute_s"]
    return {"ok": True, "forward_s": statistics.median(times), "forward_min_s": min(times),
            "load_s": data["load_s"], "max_abs_diff": worst}


def main(argv: list[str] | None = None) -> int:
    """``python -m vkbench.native.policies export OUT ENTRY... | run ENTRY BACKEND``."""
    import sys

    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) >= 3 and argv[0] == "export":
        print(json.dumps(export_policy_io(argv[2:], argv[1]), indent=2))
    elif len(argv) == 3 and argv[0] == "run":
        print(json.dumps(run_policy(argv[1], argv[2])))
    else:
        print(main.__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
