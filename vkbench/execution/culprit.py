"""Which delegated operator types make a workload fail or go wrong on Vulkan.

The runtime's load errors name a C++ file and line (``VecUtils.h:367
make_ivec2``), not the op that reached it, and ``diffusion/unet_step`` runs
but its output is far from eager with no op named at all. A bug report needs
the op. The Vulkan partitioner takes an ``operator_allowlist`` (a user's own
knob): lowering again with only a subset of the delegated operator types and
running each program in a child process (an abort must not end the search)
says whether the subset still shows the symptom. Halving while one half alone
shows it, then dropping single types that are not needed (the simple end of
Zeller's delta debugging), ends at the smallest set found: usually one
operator type, after about ``2 log2(types)`` lowerings. The types outside the
set stay on the CPU, where the portable kernels compute them right.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from vkbench.execution.measure import measure_isolated
from vkbench.execution.outcome import Outcome

#: Stages at which a lowered program stopped on the runtime side (not lowering).
RUNTIME_STAGES = ("load", "execute", "crash", "timeout")
#: Settings that make a child execute once after its warm-up (vkbench.execution.runners.timing).
_REPEATS = {"VKBENCH_MIN_REPEATS": "1", "VKBENCH_MAX_REPEATS": "1"}
#: Worst output SNR (dB) against eager that still counts as right (the ladder's own line).
MIN_SNR_DB = 40.0


@dataclass
class Symptom:
    """What to look for: a runtime failure whose error matches ``pattern``, or a wrong output."""

    kind: str  #: "fails" or "diverges"
    pattern: str = ""  #: regular expression searched in the failure line ("fails")
    min_snr_db: float = MIN_SNR_DB  #: below it the output is wrong ("diverges")

    def __post_init__(self) -> None:
        if self.kind not in ("fails", "diverges"):
            raise ValueError(f"symptom kind {self.kind!r}: 'fails' or 'diverges'")

    def shown_by(self, outcome: Outcome) -> bool:
        if self.kind == "fails":
            return (not outcome.ok and outcome.stage in RUNTIME_STAGES
                    and re.search(self.pattern, outcome.error or "") is not None)
        if not outcome.ok:  # a non-finite output is as wrong as an output can be
            return outcome.stage == "compare" and "non-finite" in (outcome.error or "")
        return outcome.snr_db is not None and not outcome.snr_db >= self.min_snr_db  # NaN is wrong too


@dataclass
class Trial:
    """One lowering with ``delegated`` op types on Vulkan, and what the program did."""

    delegated: list[str]
    shown: bool
    stage: str
    error: str
    snr_db: float | None
    delegates: int | None
    seconds: float


@dataclass
class Culprit:
    """The search's answer: the smallest set of op types whose delegation shows the symptom."""

    workload: str
    symptom: Symptom
    runner: str
    op_types: list[str]  #: every op type the full lowering delegated
    culprit: list[str] = field(default_factory=list)  #: empty: not reproduced
    trials: list[Trial] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def narrow(items: Sequence[str], shown: Callable[[list[str]], bool]) -> list[str]:
    """The smallest subset of ``items`` found for which ``shown`` holds (it must hold for all).

    Halves while one half alone shows it, then drops single items that are
    not needed. Each distinct subset is tried once.
    """
    tried: dict[frozenset[str], bool] = {}

    def check(subset: list[str]) -> bool:
        key = frozenset(subset)
        if key not in tried:
            tried[key] = shown(subset)
        return tried[key]

    current = list(items)
    while len(current) > 1:
        half = len(current) // 2
        for part in (current[:half], current[half:]):
            if check(part):
                current = part
                break
        else:
            break  # neither half alone: more than one type is needed
    for item in list(current):
        rest = [other for other in current if other != item]
        if rest and check(rest):
            current = rest
    return current


@contextlib.contextmanager
def _one_execute() -> Iterator[None]:
    """Children execute each program once: a trial asks what the output is, not how fast."""
    saved = {name: os.environ.get(name) for name in _REPEATS}
    os.environ.update(_REPEATS)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def delegated_op_types(workload: str) -> list[str]:
    """The op types the Vulkan partitioner takes from ``workload`` (partition only: no codegen)."""
    from vkbench.core.lowering import lower
    from vkbench.execution import bundle, device

    module, inputs = bundle.build(workload)
    coverage, _ = lower(module, inputs, to_executorch=False, partition_only=True,
                        partitioner_options=device.partitioner_options())
    return sorted(coverage.delegated_ops)


def find(workload: str, symptom: Symptom, *, runner: str = "python",
         progress: Callable[[Trial], None] | None = None) -> Culprit:
    """Lower and run ``workload`` with subsets of its delegated op types until the culprit is found.

    The first trial delegates every type; if it does not show ``symptom`` the
    answer's ``culprit`` is empty (not reproduced here).
    """
    start = time.perf_counter()
    answer = Culprit(workload, symptom, runner, delegated_op_types(workload))

    def shown(subset: list[str]) -> bool:
        began = time.perf_counter()
        outcome = measure_isolated(workload, ["vulkan"], [runner], delegate_only=subset)[0]
        trial = Trial(sorted(subset), symptom.shown_by(outcome), outcome.stage, outcome.error or "",
                      outcome.snr_db, outcome.delegate_calls, round(time.perf_counter() - began, 1))
        answer.trials.append(trial)
        if progress is not None:
            progress(trial)
        return trial.shown

    with _one_execute():
        if answer.op_types and shown(answer.op_types):
            answer.culprit = narrow(answer.op_types, shown)
    answer.seconds = round(time.perf_counter() - start, 1)
    return answer
