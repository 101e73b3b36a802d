"""LeRobot policies as lowering entries: registry, survey, blockers, cache.

Importing this package registers every entry (importing lerobot lazily: a
builder imports its policy only when called) and sets the process offline
(``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE``).
"""

from __future__ import annotations

from vkbench.workloads.policies import (  # noqa: F401 - registers the entries
    classic,
    eo1,
    evo1,
    fastwam,
    groot,
    lingbot,
    molmoact2,
    multi_task_dit,
    pi,
    smolvla,
    vla_jepa,
    wall_x,
    xvla,
)
from vkbench.workloads.policies.cache import cache_dir, exported_program, load_exported, save_exported
from vkbench.workloads.policies.registry import (
    ENTRIES,
    Entry,
    fast_entries,
    offline,
    policies,
    register,
    select,
    slow_entries,
)
from vkbench.workloads.policies.survey import (
    BLOCKED,
    FORMATTERS,
    LOWERED,
    Blocker,
    Row,
    blockers,
    format_json,
    format_markdown,
    format_table,
    survey,
    survey_entry,
    to_json,
)

__all__ = [
    "BLOCKED",
    "ENTRIES",
    "FORMATTERS",
    "LOWERED",
    "Blocker",
    "Entry",
    "Row",
    "blockers",
    "cache_dir",
    "exported_program",
    "fast_entries",
    "format_json",
    "format_markdown",
    "format_table",
    "load_exported",
    "offline",
    "policies",
    "register",
    "save_exported",
    "select",
    "slow_entries",
    "survey",
    "survey_entry",
    "to_json",
]

