"""``vkbench probe | partition | policies``: what the Vulkan partitioner takes, and how fast.

The domain modules (torch, executorch, lerobot) are imported inside the
handlers: ``vkbench --help`` and the build commands run where they are absent.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Any

from vkbench import tables
from vkbench.cli.common import Subparsers, UsageError, add_format_options


def add_parser(sub: Subparsers) -> None:
    """Register ``probe``, ``partition`` and ``policies``."""
    probe = sub.add_parser("probe", help="lower the seed's op probes; Vulkan programs and CPU ops")
    probe.add_argument("names", nargs="*", help="probes to run (default: all)")
    add_format_options(probe)
    probe.set_defaults(run=_probe)

    part = sub.add_parser("partition", help="time VulkanPartitioner.partition on Blocks(N)")
    part.add_argument("--blocks", nargs="+", required=True, metavar="N")
    part.add_argument("--repeat", type=int, metavar="N",
                      help="partition each size N times; print the spread under wall and CPU clocks")
    add_format_options(part)
    part.set_defaults(run=_partition)

    pol = sub.add_parser("policies", help="lower every LeRobot policy entry; what blocks the rest")
    pol.add_argument("--policy", action="append", metavar="NAME", help="policy or entry (repeatable)")
    add_format_options(pol)
    pol.set_defaults(run=_policies)


def _probe(args: argparse.Namespace) -> int:
    return probe(args.names, as_json=args.json, markdown=args.markdown)


def probe(names: list[str], *, as_json: bool = False, markdown: bool = False) -> int:
    """Lower ``names`` (all probes when empty) to ExecuTorch; print what each left on the CPU, and why."""
    from vkbench.workloads.probes import PROBES, probe_coverage

    names = names or list(PROBES)
    unknown = [n for n in names if n not in PROBES]
    if unknown:
        raise UsageError(f"unknown probe {unknown[0]!r}; known: {', '.join(PROBES)}")
    results: list[dict[str, Any]] = []
    for name in names:
        row: dict[str, Any] = {"probe": name, "shows": PROBES[name].shows}
        row.update(probe_coverage(name, to_executorch=True))
        results.append(row)
        if not as_json:
            print(f"  lowered {name}", file=sys.stderr)
    if as_json:
        print(json.dumps({"probes": results}, indent=2))
        return 0
    rows = []
    for row in results:
        if "error" in row:
            rows.append([row["probe"], "-", "-", f"FAILED at {row['failed_stage']}: {row['error']}"])
            continue
        reasons = "; ".join(f"{op}: {', '.join(r)}" for op, r in row["reasons_by_op"].items())
        rows.append([row["probe"], row["vulkan_programs"], ", ".join(sorted(row["cpu_ops"])) or "-",
                     reasons or "-"])
    print(tables.draw(markdown)(["probe", "vulkan programs", "CPU ops", "partitioner reasons"], rows))
    return 0


def _partition(args: argparse.Namespace) -> int:
    from vkbench.workloads.graphs import positive_size

    try:
        sizes = [positive_size(v) for v in args.blocks]
    except ValueError as error:
        raise UsageError(f"--blocks: {error}") from error
    if args.repeat is not None:
        return partition_noise(sizes, args.repeat, as_json=args.json, markdown=args.markdown)
    return partition(sizes, as_json=args.json, markdown=args.markdown)


def partition(sizes: list[int], *, as_json: bool = False, markdown: bool = False) -> int:
    """Time ``VulkanPartitioner.partition`` on ``Blocks(n)`` per size; print phases and the log-log fit."""
    from vkbench.workloads.scaling import loglog_exponent, measure

    points = []
    for n in sizes:
        if not as_json:
            print(f"  partitioning Blocks({n}) ...", file=sys.stderr)
        points.append(measure(n))
    exponent = loglog_exponent([p.blocks for p in points], [p.seconds for p in points])
    if as_json:
        print(json.dumps({
            "points": [p.__dict__ for p in points],
            "loglog_exponent": exponent,
        }, indent=2))
        return 0
    headers = ["blocks", "nodes", "partitions", "partition s", "propose_partitions (torch.fx)",
               "fusable_patterns (vulkan)", "is_node_supported (vulkan)", "other"]
    rows = [[p.blocks, p.nodes, p.partitions, f"{p.seconds:.2f}", f"{p.phases['propose_partitions']:.2f}",
             f"{p.phases['fusable_patterns']:.2f}", f"{p.phases['is_node_supported']:.2f}",
             f"{p.phases['other']:.2f}"] for p in points]
    print(tables.draw(markdown)(headers, rows))
    if exponent is not None:
        print(f"fitted seconds ~ blocks^{exponent:.2f}")
    return 0


def partition_noise(sizes: list[int], repeat: int, *, as_json: bool = False, markdown: bool = False) -> int:
    """``partition --repeat N``: the spread of repeated partitions under both clocks."""
    from vkbench.workloads.scaling import sample_noise

    if repeat < 2:
        raise UsageError("--repeat: needs at least 2 samples for a spread")
    noise = []
    for n in sizes:
        print(f"  partitioning Blocks({n}) x{repeat} ...", file=sys.stderr)
        noise.append(sample_noise(n, repeat).to_json())
    if as_json:
        print(json.dumps({"noise": noise}, indent=2))
        return 0
    rows = [[p["blocks"], len(p["wall"]), f"{sorted(p['wall'])[len(p['wall']) // 2]:.3f}",
             f"{100 * p['wall_cv']:.1f}", f"{sorted(p['cpu'])[len(p['cpu']) // 2]:.3f}",
             f"{100 * p['cpu_cv']:.1f}"] for p in noise]
    headers = ["blocks", "samples", "wall median s", "wall CV %", "CPU median s", "CPU CV %"]
    print(tables.draw(markdown)(headers, rows))
    return 0


def _policies(args: argparse.Namespace) -> int:
    return policies(args.policy or [], as_json=args.json, markdown=args.markdown)


def policies(names: list[str], *, as_json: bool = False, markdown: bool = False) -> int:
    """Survey the policy entries ``names`` (entries or policies; all when empty); print the rows.

    Progress goes to stderr, and so does whatever lerobot prints while a
    policy is built (model sizes), so stdout holds the report alone.
    """
    from vkbench.workloads.policies import FORMATTERS, select, survey
    from vkbench.workloads.policies import policies as known_policies

    try:
        select(names or None)
    except KeyError as error:
        raise UsageError(f"unknown policy or entry {error.args[0]!r} "
                         f"(known policies: {', '.join(known_policies())})") from error
    with contextlib.redirect_stdout(sys.stderr):
        rows = survey(names or None, progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(FORMATTERS["json" if as_json else "markdown" if markdown else "table"](rows))
    return 0
