"""The one result of running a workload: :class:`Outcome`, and its versioned JSON form.

Every way vkbench executes a program (``Many(n)`` or a policy entry, on the
Python runtime or the C++ runner, Vulkan or a CPU backend) ends in one
``Outcome``: how far it got on the ladder ExecuTorch's own backend tests use
(lowered, the ``.pte`` loads, it runs, its output matches eager PyTorch), the
stage and first error line where it stopped, and times in **seconds**.
``to_json`` writes ``{"schema": 1, ...}``; ``from_json`` also reads the forms
written before the schema existed (``runtime.Probe``, ``policy_runtime.Run``
in milliseconds, the C++ runner's policy dict), so committed files stay readable.

Comparison with eager is numpy-only (:func:`compare`): the C++ runner path
runs where torch cannot execute programs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from vkbench.results.ladder import LADDER, MATCH_SNR_DB

#: Version of :meth:`Outcome.to_json`'s form.
SCHEMA = 1
#: The stage a failure at each rung is recorded under (anything else failed before lowering ended).
_RUNG_OF_STAGE = {"load": "lowered", "execute": "loads", "compare": "runs"}


@dataclass
class Outcome:
    """One workload, lowered for one backend, executed by one runner."""

    workload: str  #: ``many/<n>``, ``probe/<name>`` or a policy entry (``act/model``)
    backend: str  #: lowering target: ``vulkan``, ``xnnpack``, ``portable``
    runner: str  #: ``python`` (executorch.runtime), ``native`` (the C++ pte_runner); "" before running
    ok: bool = False  #: executed, with finite outputs
    stage: str = ""  #: where it stopped when not ok
    error: str = ""  #: the first error line there
    execute_s: float | None = None  #: median ``execute``, after a warm-up
    execute_min_s: float | None = None
    repeats: int = 0
    max_abs_diff: float | None = None  #: over every float output, against eager
    snr_db: float | None = None  #: worst float output's signal-to-noise ratio against eager
    float_outputs: int = 0
    delegate_calls: int | None = None  #: delegate calls of ``backend`` in the program
    nodes_total: int | None = None
    nodes_cpu: int | None = None  #: compute nodes left to the CPU
    program_bytes: int | None = None
    #: build, lower, lower.<stage>, load, first_execute
    seconds: dict[str, float] = field(default_factory=dict)

    def fail(self, stage: str, error: str) -> Outcome:
        self.ok, self.stage, self.error = False, stage, error[:500]
        return self

    @property
    def reached(self) -> str:
        """The highest rung of :data:`LADDER` passed ("" when it did not lower).

        A bundle's lowering outcome has no runner yet: ``ok`` there means "lowered".
        """
        if self.ok and not self.runner:
            return "lowered"
        if self.ok:
            return "matches" if self.snr_db is not None and self.snr_db >= MATCH_SNR_DB else "runs"
        return _RUNG_OF_STAGE.get(self.stage, "")

    @property
    def rungs_short(self) -> int:
        """Rungs of the ladder not reached: 0 matches eager, 4 did not lower (lower is better)."""
        return len(LADDER) - (LADDER.index(self.reached) + 1 if self.reached else 0)

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        """Read the schema-1 form or one written before it (see the module doc)."""
        if data.get("schema") == SCHEMA:
            known = {f.name for f in fields(cls)}
            return cls(**{k: v for k, v in data.items() if k in known})
        if "schema" in data:
            raise ValueError(f"unknown outcome schema {data['schema']!r} (this vkbench reads {SCHEMA})")
        return _from_legacy(data)


def _from_legacy(data: dict[str, Any]) -> Outcome:
    """``runtime.Probe`` (``n``), ``policy_runtime.Run`` (``entry``, ms) or the runner's policy dict."""
    seconds = dict(data.get("seconds") or {})
    if "n" in data:  # runtime.Probe: Many(n) on the Python runtime (or native, seconds.execute)
        outcome = Outcome(f"many/{data['n']}", "vulkan", "native" if "execute_min" in seconds else "python",
                          ok=data["ok"], stage=data.get("stage", ""), error=data.get("error", ""))
        outcome.max_abs_diff = _number(data.get("max_abs_diff"))
        if data.get("vulkan_programs", -1) >= 0:
            outcome.delegate_calls, outcome.nodes_cpu = data["vulkan_programs"], data.get("cpu_nodes")
        outcome.execute_s = seconds.pop("execute", None)
        outcome.execute_min_s = seconds.pop("execute_min", None)
        outcome.seconds = seconds
        return outcome
    if "entry" in data:  # policy_runtime.Run: milliseconds
        ms = {"forward_ms": "execute_s", "forward_ms_min": "execute_min_s"}
        outcome = Outcome(data["entry"], data["backend"], "python", ok=data["ok"],
                          stage=data.get("stage", ""), error=data.get("error", ""), seconds=seconds)
        for old, new in ms.items():
            if data.get(old) is not None:
                setattr(outcome, new, data[old] / 1000)
        for name in ("repeats", "max_abs_diff", "float_outputs", "delegate_calls", "nodes_total", "nodes_cpu",
                     "program_bytes"):
            if data.get(name) is not None:
                setattr(outcome, name, data[name])
        return outcome
    if "forward_s" in data or "ok" in data:  # native.policies.run_policy: entry and backend are outside it
        outcome = Outcome("", "", "native", ok=data["ok"], stage=data.get("stage", ""),
                          error=data.get("error", ""))
        outcome.execute_s, outcome.execute_min_s = data.get("forward_s"), data.get("forward_min_s")
        outcome.max_abs_diff = data.get("max_abs_diff")
        if "load_s" in data:
            outcome.seconds["load"] = data["load_s"]
        return outcome
    raise ValueError(f"not an outcome: keys {sorted(data)}")


def _number(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def compare(outputs: Sequence[Any], expected: Sequence[Any]) -> tuple[float, float | None, int]:
    """``(max abs diff, worst SNR in dB, float outputs)`` of runtime ``outputs`` against eager.

    Both are sequences of arrays (numpy, or anything ``numpy.asarray`` takes),
    in ``torch.export``'s flattened order. Raises ``ValueError`` when they do
    not line up (count, or element count per output). SNR is
    ``10 log10(sum(ref²) / sum((out - ref)²))``: ``inf`` when identical, None
    without float outputs.
    """
    import numpy as np

    if len(outputs) != len(expected):
        raise ValueError(f"{len(outputs)} tensor outputs, eager has {len(expected)}")
    worst, snr, count = 0.0, None, 0
    for index, (got, want) in enumerate(zip(outputs, expected, strict=True)):
        a, b = np.asarray(got), np.asarray(want)
        if a.size != b.size:
            raise ValueError(f"output {index}: {a.size} values, eager has {b.size}")
        if b.dtype.kind != "f":
            continue
        count += 1
        if not b.size:
            continue
        a64, b64 = a.reshape(-1).astype(np.float64), b.reshape(-1).astype(np.float64)
        noise = a64 - b64
        local = float(np.abs(noise).max())
        worst = max(worst, local) if math.isfinite(local) else math.inf  # max() would drop a NaN
        power, error = float(np.sum(b64 * b64)), float(np.sum(noise * noise))
        db = math.inf if error == 0 else (10 * math.log10(power / error) if power > 0 else -math.inf)
        if not math.isfinite(worst):
            db = -math.inf
        snr = db if snr is None else min(snr, db)
    return worst, snr, count


LADDER_HEADERS = ("workload", "backend", "runner", "reached", "stopped at", "execute ms (median)",
                  "max abs diff", "SNR dB", "delegates", "cpu nodes")


def ladder_rows(outcomes: list[Any]) -> list[list[str]]:
    """One table row per outcome (see :data:`LADDER_HEADERS`)."""

    def number(value: float | None, digits: str) -> str:
        return "-" if value is None else format(value, digits)

    rows = []
    for o in outcomes:
        stopped = "" if o.ok else f"{o.stage}: {o.error}"
        cpu = "-" if o.nodes_cpu is None else f"{o.nodes_cpu}/{o.nodes_total}"
        ms = None if o.execute_s is None else 1000 * o.execute_s
        rows.append([o.workload, o.backend, o.runner, o.reached or "-", stopped or "-", number(ms, ".3f"),
                     number(o.max_abs_diff, ".3g"), number(o.snr_db, ".1f"),
                     "-" if o.delegate_calls is None else str(o.delegate_calls), cpu])
    return rows
