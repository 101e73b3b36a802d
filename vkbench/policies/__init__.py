"""LeRobot policies as lowering entries: registry, survey, blockers, cache.

Importing this package registers every entry (importing lerobot lazily: a
builder imports its policy only when called) and sets the process offline
(``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE``).
"""

from __future__ import annotations

import contextlib
import sys

from vkbench.policies import (  # noqa: F401 - registers the entries
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
from vkbench.policies.cache import cache_dir, exported_program, load_exported, save_exported
from vkbench.policies.registry import (
    ENTRIES,
    Entry,
    fast_entries,
    offline,
    policies,
    register,
    select,
    slow_entries,
)
from vkbench.policies.survey import (
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
    "run_policies_command",
    "save_exported",
    "select",
    "slow_entries",
    "survey",
    "survey_entry",
    "to_json",
]


def run_policies_command(names: list[str] | None, fmt: str) -> int:
    """``vkbench policies``: survey ``names`` (entries or policies; all when empty), print ``fmt``.

    ``fmt`` is ``table``, ``markdown`` or ``json``. Progress goes to stderr.
    Returns 0, or 2 (one stderr line) for an unknown name or format.
    """
    if fmt not in FORMATTERS:
        print(
            f"vkbench policies: unknown format {fmt!r} (choose from {', '.join(FORMATTERS)})", file=sys.stderr
        )
        return 2
    try:
        select(names)
    except KeyError as error:
        known = ", ".join(policies())
        print(
            f"vkbench policies: unknown policy or entry {error.args[0]!r} (known policies: {known})",
            file=sys.stderr,
        )
        return 2
    # lerobot prints model sizes on stdout while building; keep stdout for the report alone.
    with contextlib.redirect_stdout(sys.stderr):
        rows = survey(names, progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(FORMATTERS[fmt](rows))
    return 0
