"""Every ``VKBENCH_*`` environment knob, in one table, read when asked.

asv runs the suite and the build commands in processes whose only input is
the environment, so the knobs are environment variables; this module is the
one place that names them, documents them and reads them. Nothing is read at
import time: a test or a caller that sets a variable sees it on the next call.
``vkbench doctor`` prints the effective values; ``docs/settings.md`` is
generated from :data:`SETTINGS` (``vkbench docs settings``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from vkbench import tables


@dataclass(frozen=True)
class Setting:
    """One knob: its variable, the value used when unset ("" = computed, see ``doc``), what it does."""

    name: str
    default: str
    doc: str
    area: str


_ALL = (
    Setting("VKBENCH_PYTHON", "", "Python 3.12 that `scripts/setup` builds `.venv` from (default: "
            "`python3.12` on PATH, then pyenv 3.12.1)", "setup"),
    # building ExecuTorch inside asv (vkbench/build)
    Setting("VKBENCH_BUILD", "aot", "asv matrix: `aot` (commit's Python on a release wheel) or `full` "
            "(a Vulkan-enabled build)", "build"),
    Setting("VKBENCH_EVENT_TRACER", "ON", "asv matrix, `full` builds: event tracer ON or OFF", "build"),
    Setting("VKBENCH_BASE_PYTHON", "", "interpreter holding torch/lerobot/vkbench that asv envs link to "
            "(default: `<repo>/.venv/bin/python`)", "build"),
    Setting("VKBENCH_AOT_BASE", "auto", "release wheel the aot overlay starts from (`auto`: nearest on the "
            "index)", "build"),
    Setting("VKBENCH_AOT_SMOKE", "executorch.exir,executorch.backends.vulkan.partitioner.vulkan_partitioner",
            "modules the aot build imports to prove the overlay works (empty: skip)", "build"),
    Setting("VKBENCH_AOT_INDEX", "", "package index for release wheels (default: `$PIP_INDEX_URL`, else "
            "PyPI)", "build"),
    Setting("VKBENCH_WHEELHOUSE", "", "downloaded release wheels and the index answer (default: "
            "`<repo>/.asv/wheels`)", "build"),
    Setting("VKBENCH_GLSLC_CACHE", "", "where Debian's glslc is unpacked (default: "
            "`~/.cache/vkbench/glslc`)", "build"),
    Setting("VKBENCH_GLSLC_SUITE", "trixie", "Debian suite glslc comes from", "build"),
    Setting("VKBENCH_DEBIAN_MIRROR", "http://deb.debian.org/debian", "Debian mirror for glslc", "build"),
    # recording
    Setting("VKBENCH_MACHINE", "", "asv machine name (default: `<arch>-<cores>core-cpu`)", "record"),
    Setting("VKBENCH_FAILURE_LOG", "", "file the suite appends a JSON line to per failed workload (stage, "
            "first error line), per lowered one (CPU ops and why) and per new executorch file read (set by "
            "`vkbench record`/`upstream`, which store them beside asv's results; "
            "`vkbench/results/run_log.py`)", "record"),
    Setting("VKBENCH_CACHE", "", "exported-program cache (default: `<repo>/.asv/cache/exported`)", "record"),
    Setting("VKBENCH_SITE_COVERAGE", "1", "`0`: publishing lists cached coverage only, lowers nothing",
            "record"),
    # the Vulkan runtime
    Setting("VKBENCH_TEXTURE_LIMITS", "", "`x,y,z` or one number given to the partitioner (default: the "
            "device's 3D limit when below 16384)", "runtime"),
    Setting("VKBENCH_STEP_CAP", "4000", "upper end of the step-limit search (the largest `Many(n)`)",
            "runtime"),
    Setting("VKBENCH_STEP_START", "256", "first size the step-limit search tries (then it doubles)",
            "runtime"),
    Setting("VKBENCH_RUN_TIMEOUT", "1800", "seconds one isolated workload (lowering and every run) may take",
            "runtime"),
    Setting("VKBENCH_BUNDLES", "", "folder keeping lowered programs, inputs and eager outputs per workload "
            "(reused by the same toolchain; the C++ runner's input elsewhere)", "runtime"),
    Setting("VKBENCH_PTE_RUNNER", "", "a built C++ `pte_runner` (its libraries beside it)", "runtime"),
    Setting("VKBENCH_MIN_REPEATS", "5", "Python runner: fewest timed executes", "runtime"),
    Setting("VKBENCH_MAX_REPEATS", "50", "Python runner: most timed executes", "runtime"),
    Setting("VKBENCH_TIME_BUDGET_S", "3", "Python runner: seconds after which no more repeats start",
            "runtime"),
)
#: Variable name -> its :class:`Setting`.
SETTINGS: dict[str, Setting] = {setting.name: setting for setting in _ALL}


def text(name: str, *, empty_is_a_value: bool = False) -> str:
    """The variable's value (stripped), else its default; ``KeyError`` for a name not in the table.

    ``empty_is_a_value``: a variable set to "" means "" (``VKBENCH_AOT_SMOKE=""`` skips the smoke test).
    """
    setting = SETTINGS[name]
    if empty_is_a_value and name in os.environ:
        return os.environ[name].strip()
    return os.environ.get(name, "").strip() or setting.default


def integer(name: str) -> int:
    return int(text(name))


def number(name: str) -> float:
    return float(text(name))


def path(name: str) -> Path | None:
    """The variable as a path, or None when neither it nor a default is set."""
    value = text(name)
    return Path(value).expanduser() if value else None


def effective() -> list[tuple[str, str, str]]:
    """``(name, value, source)`` per setting; source is ``env`` or ``default``."""
    return [(s.name, text(s.name) or "(unset)",
             "env" if os.environ.get(s.name, "").strip() else "default") for s in _ALL]


def markdown() -> str:
    """The settings table of ``docs/settings.md``."""
    rows = [[s.area, f"`{s.name}`", f"`{s.default}`" if s.default else "(unset)", s.doc] for s in _ALL]
    return tables.markdown(["area", "variable", "default", "what it sets"], rows)
