"""The seed's op probes: how each coverage rule lowers at this commit.

Counts only: lower is better for both (asv flags every increase).
"""

from __future__ import annotations

from .common import PROBE_NAMES, lower_probe, quiet


class ProbeCoverage:
    """One probe per coverage rule (dtype, batch size, missing kernel)."""

    params = [PROBE_NAMES]
    param_names = ["case"]
    timeout = 900  # setup_cache lowers all nine probes (~45 s on 2 cores)

    def setup_cache(self) -> dict[str, dict]:
        quiet()
        return {name: lower_probe(name) for name in PROBE_NAMES}

    def setup(self, cache: dict[str, dict], case: str) -> None:
        if "error" in cache[case]:
            raise NotImplementedError(f"{case} does not lower: {cache[case]['error']}")

    def track_cpu_ops(self, cache: dict[str, dict], case: str) -> int:
        """Compute nodes left on the CPU."""
        return cache[case]["nodes_cpu"]

    track_cpu_ops.unit = "nodes"

    def track_vulkan_programs(self, cache: dict[str, dict], case: str) -> int:
        """Delegate calls: each one is a CPU<->GPU transition."""
        return cache[case]["vulkan_programs"]

    track_vulkan_programs.unit = "programs"
