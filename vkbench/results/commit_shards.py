"""Split a list of upstream commits into shards that each fit one CI job.

The Pages workflow runs one GitHub Actions job per shard (``asv run
HASHFILE:<shard>`` under one machine name) and merges their results. A shard
is sized from the *measured* per-commit cost of the tier (``vkbench cost``
over committed results), not a guess: commits per shard = (job budget -
set-up) / (median minutes per commit x safety margin).
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from vkbench.results.cost import costs
from vkbench.suite.tiers import TARGET_MINUTES

#: Minutes a job spends before benchmarking (checkout, pip install of torch/executorch/lerobot).
SETUP_MINUTES = 20.0
#: Runner variance (other hosts, cold caches, a slow commit): plan for this much more.
SAFETY = 1.5


@dataclass
class Plan:
    tier: str
    minutes_per_commit: float
    source: str  #: where the per-commit figure came from
    commits_per_shard: int
    shards: list[list[str]]

    def matrix(self) -> dict[str, list[dict[str, object]]]:
        """GitHub Actions ``strategy.matrix`` (``include``: one job per shard)."""
        return {"include": [{"shard": i, "hashes": " ".join(s)} for i, s in enumerate(self.shards)]}

    def expected_wall_minutes(self) -> float:
        """Wall time of the whole workflow when all shards run at once (the largest shard)."""
        largest = max((len(s) for s in self.shards), default=0)
        return round(SETUP_MINUTES + largest * self.minutes_per_commit, 1)


def measured_minutes(results_dirs: list[Path], tier: str) -> tuple[float, str]:
    """Median wall minutes per commit of ``tier`` in the results, else the tier's target."""
    walls = [c.wall_s / 60 for d in results_dirs if (d / "benchmarks.json").is_file()
             for c in costs(d, [tier])]
    if walls:
        return round(statistics.median(walls), 2), f"median of {len(walls)} recorded commits"
    return TARGET_MINUTES[tier], "the tier's target (nothing recorded yet)"


def plan(hashes: list[str], tier: str, budget_minutes: float, results_dirs: list[Path]) -> Plan:
    """Shards of consecutive commits, each expected to finish within ``budget_minutes``."""
    per_commit, source = measured_minutes(results_dirs, tier)
    fits = math.floor((budget_minutes - SETUP_MINUTES) / (per_commit * SAFETY))
    if fits < 1:
        raise ValueError(f"one {tier} commit (~{per_commit * SAFETY:.0f} min with margin) does not fit a "
                         f"{budget_minutes:.0f}-min job")
    count = math.ceil(len(hashes) / fits) if hashes else 0
    size = math.ceil(len(hashes) / count) if count else 0  # balance: equal shards, none over `fits`
    shards = [hashes[i:i + size] for i in range(0, len(hashes), size)] if size else []
    return Plan(tier, per_commit, source, fits, shards)


def read_hashes(path: Path) -> list[str]:
    return [line.split()[0] for line in path.read_text().splitlines() if line.strip()]


def to_json(result: Plan) -> str:
    return json.dumps({"tier": result.tier, "minutes_per_commit": result.minutes_per_commit,
                       "source": result.source, "commits_per_shard": result.commits_per_shard,
                       "expected_wall_minutes": result.expected_wall_minutes(),
                       "matrix": result.matrix()})
