"""vkbench's companion file of an asv result file: provenance, failure reasons, what stayed on the CPU.

asv stores a skipped or failed benchmark as NaN and prints its reason only
on stderr; it stores neither the tier nor the launch settings a file was
recorded under. vkbench writes them beside the file, as
``<machine>/<result file stem>.vkbench`` (not ``.json``: asv loads every
``*.json`` under its results directory as a result file), in a versioned
JSON form::

    {"vkbench_sidecar": 1,
     "provenance": {"tier": "gate", "launch_method": "forkserver", ...},
     "failures": [{"benchmark": "bench_probes.ProbeCoverage.track_cpu_ops",
                   "params": ["mha_cross"], "stage": "preprocess", "error": "..."}],
     "cpu": {"bench_probes": {"mish": {"aten.softplus.default": {"nodes": 1, "reasons": {...}}}}},
     "suite_reads": {"bench_probes": ["vkbench/core/new_helper.py"]}}

A sidecar that cannot be read is treated as absent (the asv file is still
the record) and said so, once per file, on stderr: ``vkbench changes`` would
otherwise show the commit without its reasons, tier or patterns with no
hint why. :func:`merge` never drops what an earlier run stored. Failure
reasons are read through the failure key (:mod:`vkbench.results.failure_key`),
so a reason stored before a mask existed reads like a new one; the file is
not rewritten for it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from vkbench.results.failure_key import normalize_error
from vkbench.results.model import CpuOps, Failure, Params, Provenance, Sidecar

SCHEMA = 1
SUFFIX = ".vkbench"


def path_for(result_path: Path) -> Path:
    return Path(result_path).with_suffix(SUFFIX)


def from_json(data: dict[str, Any]) -> Sidecar:
    known = set(Provenance.__dataclass_fields__)
    provenance = Provenance(**{k: v for k, v in (data.get("provenance") or {}).items() if k in known})
    failures = {(str(f["benchmark"]), tuple(str(p) for p in f.get("params") or [])):
                Failure(str(f.get("stage") or ""),
                        normalize_error(str(f.get("stage") or ""), str(f.get("error") or "")))
                for f in data.get("failures") or [] if isinstance(f, dict) and "benchmark" in f}
    inputs = {str(i) for i in data.get("inputs") or [] if isinstance(i, str)}
    patterns = {str(k): str(v) for k, v in (data.get("patterns") or {}).items()}
    cpu = {str(module): {str(w): dict(ops) for w, ops in workloads.items() if isinstance(ops, dict)}
           for module, workloads in (data.get("cpu") or {}).items() if isinstance(workloads, dict)}
    suite_reads = {str(module): {str(f) for f in files if isinstance(f, str)}
                   for module, files in (data.get("suite_reads") or {}).items() if isinstance(files, list)}
    return Sidecar(provenance, failures, inputs, patterns, cpu, suite_reads)


def to_json(record: Sidecar) -> dict[str, Any]:
    return {"vkbench_sidecar": SCHEMA, "provenance": record.provenance.to_json(),
            "failures": [{"benchmark": name, "params": list(params), **failure.to_json()}
                         for (name, params), failure in sorted(record.failures.items())],
            **({"inputs": sorted(record.inputs)} if record.inputs else {}),
            **({"patterns": dict(sorted(record.patterns.items()))} if record.patterns else {}),
            **({"cpu": {m: dict(sorted(w.items())) for m, w in sorted(record.cpu.items())}}
               if record.cpu else {}),
            **({"suite_reads": {m: sorted(f) for m, f in sorted(record.suite_reads.items())}}
               if record.suite_reads else {})}


#: Sidecars already reported unreadable by this process: a command reads a file more than once
#: (recording reads every file before and after the run), the user hears of it once.
_REPORTED: set[Path] = set()


def _unreadable(path: Path, what: str) -> Sidecar:
    """An empty sidecar, after one line on stderr naming the file and what is wrong with it."""
    if path not in _REPORTED:
        _REPORTED.add(path)
        print(f"vkbench: {path}: {what}; read without its sidecar", file=sys.stderr)
    return Sidecar()


def read(result_path: Path) -> Sidecar:
    """The sidecar of a result file; an empty one when there is none, or when it cannot be read."""
    path = path_for(result_path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return Sidecar()
    except (OSError, UnicodeDecodeError) as error:
        return _unreadable(path, f"unreadable ({type(error).__name__}: {error})")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return _unreadable(path, f"not JSON ({error.msg} at line {error.lineno} column {error.colno})")
    if not isinstance(data, dict):
        return _unreadable(path, f"not a sidecar (top level is {type(data).__name__})")
    if data.get("vkbench_sidecar") != SCHEMA:
        return _unreadable(path, f"not a version-{SCHEMA} sidecar (vkbench_sidecar is "
                                 f"{data.get('vkbench_sidecar')!r})")
    try:
        return from_json(data)
    except (AttributeError, TypeError, ValueError) as error:
        return _unreadable(path, f"malformed ({type(error).__name__}: {error})")


def merge(result_path: Path, provenance: Provenance | None = None,
          failures: Iterable[tuple[str, Params, Failure]] = (), inputs: Iterable[str] = (),
          patterns: dict[str, str | None] | None = None,
          cpu: dict[tuple[str, str], CpuOps] | None = None,
          suite_reads: dict[str, set[str]] | None = None) -> Path:
    """Add to a result file's sidecar: set the given provenance fields, add or replace failures,
    add to the files read, set each written benchmark's ``-b`` pattern (None or "": the run selected
    all), set each lowered workload's CPU ops (``(module, workload) -> ops``), add to the vkbench
    files each benchmark module read outside its list (``module -> files``)."""
    record = read(result_path)
    for module, files in (suite_reads or {}).items():
        record.suite_reads[module] = record.suite_reads.get(module, set()) | set(files)
    for (module, workload), ops in (cpu or {}).items():
        record.cpu.setdefault(module, {})[workload] = ops
    record.inputs |= set(inputs)
    for benchmark, pattern in (patterns or {}).items():
        record.patterns[benchmark] = pattern or ""  # "": the run selected every combination
    if provenance is not None:
        for key, value in provenance.to_json().items():
            setattr(record.provenance, key, value)
    for benchmark, params, failure in failures:
        record.failures[(benchmark, tuple(params))] = failure
    path = path_for(result_path)
    path.write_text(json.dumps(to_json(record), indent=1, sort_keys=True) + "\n")
    return path


def drop_failures(result_path: Path, keep: Iterable[tuple[str, Params]]) -> None:
    """Forget failure reasons of points that now have values (a re-run fixed them)."""
    record = read(result_path)
    wanted = set(keep)
    record.failures = {k: v for k, v in record.failures.items() if k in wanted}
    path_for(result_path).write_text(json.dumps(to_json(record), indent=1, sort_keys=True) + "\n")


def move(source: Path, target: Path) -> None:
    """Carry a result file's sidecar along when the file is renamed or merged into ``target``.

    Merging keeps both: ``target``'s own entries win over the moved ones.
    """
    old = path_for(source)
    if not old.is_file() or Path(source) == Path(target):
        return
    moved = read(source)
    kept = read(target)
    for key, value in moved.provenance.to_json().items():
        if getattr(kept.provenance, key) is None:
            setattr(kept.provenance, key, value)
    kept.failures = {**moved.failures, **kept.failures}
    kept.inputs |= moved.inputs
    for module, files in moved.suite_reads.items():
        kept.suite_reads[module] = kept.suite_reads.get(module, set()) | files
    kept.patterns = {**moved.patterns, **kept.patterns}
    path_for(target).write_text(json.dumps(to_json(kept), indent=1, sort_keys=True) + "\n")
    old.unlink()
