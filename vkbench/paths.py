"""Where the checkout keeps things: one definition, so a module that moves keeps its paths."""

from __future__ import annotations

from pathlib import Path

#: The repository root (the folder holding ``asv.conf.json``).
ROOT = Path(__file__).resolve().parent.parent
#: Committed asv results and the other recorded data (``releases/``, ``upstream/``, ``policies/``, ...).
RESULTS_ROOT = ROOT / "results"
#: asv's and vkbench's own state: envs, caches, derived configs (not committed).
STATE = ROOT / ".asv"
