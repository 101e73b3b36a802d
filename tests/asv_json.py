"""Real asv 0.6 result files written in a temp dir, for the changes, events and confirmation tests.

The layout is asv's own (``result_columns``, one row per benchmark, values in the order of the
parameter product, samples and statistics for timings), read back through vkbench's one reader.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

COLUMNS = ["result", "params", "version", "started_at", "duration", "stats_ci_99_a", "stats_ci_99_b",
           "stats_q_25", "stats_q_75", "stats_number", "stats_repeat", "samples"]
SUITE = "suite-0123456789abcdef"


def count_row(params: list[str], values: list[float], version: str = SUITE) -> list[Any]:
    """A ``track_`` row over one parameter (asv quotes strings: ``"'mish'"``)."""
    return [values, [params], version, 1, 1.0]


def timing_row(params: list[str], samples: list[list[float]], version: str = SUITE) -> list[Any]:
    """A ``time_`` row: asv's value is the median of the samples, with its statistics and the samples."""
    medians = [statistics.median(s) for s in samples]
    spread = [(min(s), max(s)) for s in samples]
    return [medians, [params], version, 1, 1.0, [a for a, _ in spread], [b for _, b in spread],
            [a for a, _ in spread], [b for _, b in spread], [1] * len(samples), [len(s) for s in samples],
            samples]


def write_result(root: Path, commit: str, date: int, rows: dict[str, list[Any]],
                 machine: str = "box") -> Path:
    path = root / machine / f"{commit[:8]}-virtualenv-py3.12.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"commit_hash": commit, "env_name": "virtualenv-py3.12", "date": date,
                                "version": 2, "result_columns": COLUMNS, "results": rows}))
    return path
