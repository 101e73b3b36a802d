"""The seed's op probes: how each coverage rule lowers at this commit.

Counts only: lower is better for all (asv flags every increase). Each probe
is lowered once per commit, in the shared ``setup_cache``.
"""

from __future__ import annotations

from typing import Any

from .common import PROBE_NAMES, et_count, lower_probe, quiet, skip, suite_version, version_classes

version = suite_version(__name__)  # asv: every benchmark here, a digest of the code its records run


class _Probes:
    params = [PROBE_NAMES]
    param_names = ["case"]
    timeout = 900  # setup_cache lowers every probe (~60 s on 2 cores)

    def setup_cache(self) -> dict[str, dict[str, Any]]:
        quiet()
        return {name: lower_probe(name) for name in PROBE_NAMES}


class ProbeCoverage(_Probes):
    """One probe per coverage rule (dtype, batch size, missing kernel)."""

    def setup(self, cache: dict[str, dict], case: str) -> None:
        if "error" in cache[case]:
            skip(f"{case} does not lower: {cache[case]['error']}")

    def track_cpu_ops(self, cache: dict[str, dict], case: str) -> int:
        """Compute nodes left on the CPU."""
        return cache[case]["nodes_cpu"]

    track_cpu_ops.unit = "nodes"

    def track_vulkan_programs(self, cache: dict[str, dict], case: str) -> int:
        """Delegate calls: each one is a CPU<->GPU transition."""
        return cache[case]["vulkan_programs"]

    track_vulkan_programs.unit = "programs"

    def track_cpu_node_share(self, cache: dict[str, dict], case: str) -> float:
        """Percent of compute nodes left on the CPU (pytorch/executorch#12495 asks for the share)."""
        return cache[case]["cpu_percent"]

    track_cpu_node_share.unit = "percent"

    def track_cpu_op_type_share(self, cache: dict[str, dict], case: str) -> float:
        """Percent of the graph's unique operator types with a node left on the CPU."""
        return cache[case]["cpu_op_type_percent"]

    track_cpu_op_type_share.unit = "percent"

    def track_et_delegated_nodes(self, cache: dict[str, dict], case: str) -> int:
        """ExecuTorch's count, not vkbench's: ``get_delegation_info``'s ``num_delegated_nodes``.

        Every call_function node inside the delegates, getitem included; recorded beside vkbench's
        counts so a reader can match them with what ExecuTorch's own tools report.
        """
        return et_count(cache[case], "et_delegated_nodes")

    track_et_delegated_nodes.unit = "nodes"

    def track_et_non_delegated_nodes(self, cache: dict[str, dict], case: str) -> int:
        """ExecuTorch's count, not vkbench's: ``get_delegation_info``'s ``num_non_delegated_nodes``.

        Every call_function node outside the delegates except the delegate calls, so getitem
        counts as a CPU node here and not in ``track_cpu_ops``.
        """
        return et_count(cache[case], "et_non_delegated_nodes")

    track_et_non_delegated_nodes.unit = "nodes"


class ProbeWork(_Probes):
    def track_work_seconds(self, cache: dict[str, dict], case: str) -> float:
        """Wall seconds of building and lowering the probe (failed lowerings too)."""
        return cache[case]["work_seconds"]

    track_work_seconds.unit = "seconds"


class ProbeFailure(_Probes):
    """Whether the probe fails to lower: the upstream-bug repros start at 1, and their fix is a step to 0."""

    def track_lowering_failed(self, cache: dict[str, dict], case: str) -> int:
        return int("error" in cache[case])

    track_lowering_failed.unit = "failed"


version_classes(globals())  # asv: each class its own series (kept or restarted by evidence)
