"""``vkbench``: the one command line (``vkbench --help`` lists the subcommands).

Human tables by default; ``--json`` prints one JSON document on stdout
Bad input prints one line on stderr and exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vkbench import tables
from vkbench.tiers import TIERS

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input from the user: one line on stderr, exit 2."""


def _probe(args: argparse.Namespace) -> int:
    from vkbench.probes import PROBES, probe_coverage

    names = args.names or list(PROBES)
    unknown = [n for n in names if n not in PROBES]
    if unknown:
        raise UsageError(f"unknown probe {unknown[0]!r}; known: {', '.join(PROBES)}")
    results: list[dict[str, Any]] = []
    for name in names:
        row: dict[str, Any] = {"probe": name, "shows": PROBES[name].shows}
        row.update(probe_coverage(name, to_executorch=True))
        results.append(row)
        if not args.json:
            print(f"  lowered {name}", file=sys.stderr)
    if args.json:
        print(json.dumps({"probes": results}, indent=2))
        return 0
    rows = []
    for row in results:
        if "error" in row:
            rows.append([row["probe"], "-", "-", f"FAILED at {row['failed_stage']}: {row['error']}"])
            continue
        reasons = "; ".join(
            f"{op}: {', '.join(r)}" for op, r in row["reasons_by_op"].items()
        )
        rows.append([row["probe"], row["vulkan_programs"], ", ".join(sorted(row["cpu_ops"])) or "-",
                     reasons or "-"])
    render = tables.markdown if args.markdown else tables.render
    print(render(["probe", "vulkan programs", "CPU ops", "partitioner reasons"], rows))
    return 0


def _partition(args: argparse.Namespace) -> int:
    from vkbench.graphs import positive_size
    from vkbench.scaling import loglog_exponent, measure

    try:
        sizes = [positive_size(v) for v in args.blocks]
    except ValueError as error:
        raise UsageError(f"--blocks: {error}") from error
    if args.repeat is not None:
        return _partition_noise(sizes, args)
    points = []
    for n in sizes:
        if not args.json:
            print(f"  partitioning Blocks({n}) ...", file=sys.stderr)
        points.append(measure(n))
    exponent = loglog_exponent([p.blocks for p in points], [p.seconds for p in points])
    if args.json:
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
    print((tables.markdown if args.markdown else tables.render)(headers, rows))
    if exponent is not None:
        print(f"fitted seconds ~ blocks^{exponent:.2f}")
    return 0


def _partition_noise(sizes: list[int], args: argparse.Namespace) -> int:
    """``partition --repeat N``: the spread of repeated partitions under both clocks."""
    from vkbench.scaling import sample_noise

    if args.repeat < 2:
        raise UsageError("--repeat: needs at least 2 samples for a spread")
    noise = []
    for n in sizes:
        print(f"  partitioning Blocks({n}) x{args.repeat} ...", file=sys.stderr)
        noise.append(sample_noise(n, args.repeat).to_json())
    if args.json:
        print(json.dumps({"noise": noise}, indent=2))
        return 0
    rows = [[p["blocks"], len(p["wall"]), f"{sorted(p['wall'])[len(p['wall']) // 2]:.3f}",
             f"{100 * p['wall_cv']:.1f}", f"{sorted(p['cpu'])[len(p['cpu']) // 2]:.3f}",
             f"{100 * p['cpu_cv']:.1f}"] for p in noise]
    headers = ["blocks", "samples", "wall median s", "wall CV %", "CPU median s", "CPU CV %"]
    print((tables.markdown if args.markdown else tables.render)(headers, rows))
    return 0


def _cost(args: argparse.Namespace) -> int:
    from vkbench.cost import costs, render

    if not (args.results / "benchmarks.json").is_file():
        raise UsageError(f"{args.results} holds no asv results (no benchmarks.json)")
    rows = costs(args.results, args.tier)
    if args.json:
        print(json.dumps({"costs": [r.to_json() for r in rows]}, indent=2))
    else:
        print(render(rows, markdown=args.markdown))
    return 0


def _shards(args: argparse.Namespace) -> int:
    from vkbench.shards import plan, read_hashes, to_json

    try:
        result = plan(read_hashes(args.hashes), args.tier, args.budget, args.results)
    except (OSError, ValueError) as error:
        raise UsageError(str(error)) from error
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        for index, shard in enumerate(result.shards):
            (args.out / f"shard-{index}.txt").write_text("\n".join(shard) + "\n")
    print(to_json(result))
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from vkbench.doctor import diagnose

    if args.settings:
        from vkbench import settings

        print(settings.markdown())
        return 0
    report = diagnose()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for key, value in report["versions"].items():
        print(f"{key:22s} {value}")
    backends = report["registered_backends"]
    print(f"{'runtime backends':22s} {', '.join(backends) if isinstance(backends, list) else backends}")
    print(f"{'Vulkan runtime':22s} {'yes' if report['vulkan_runtime'] else 'no'}")
    devices = report["vulkan_devices"]
    shown = ", ".join(devices) if isinstance(devices, list) else devices
    print(f"{'Vulkan devices':22s} {shown or 'none'}")
    print(f"{'runtime benchmarks':22s} {report['runtime_benchmarks']}")
    print("settings (docs/settings.md):")
    for name, setting in report["settings"].items():
        print(f"  {name:22s} {setting['value']}  ({setting['source']})")
    return 0


def _policies(args: argparse.Namespace) -> int:
    from vkbench.policies import run_policies_command

    fmt = "json" if args.json else "markdown" if args.markdown else "table"
    return run_policies_command(args.policy or None, fmt)


def _record(args: argparse.Namespace) -> int:
    from vkbench.ledger import record_installed
    from vkbench.tiers import bench_args

    asv_args = [a for a in args.asv_args if a != "--"]
    if args.tier:
        asv_args = bench_args(args.tier) + asv_args
    return record_installed(asv_args, publish=not args.no_publish, release_version=args.release)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vkbench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    probe = sub.add_parser("probe", help="lower the seed's op probes; Vulkan programs and CPU ops")
    probe.add_argument("names", nargs="*", help="probes to run (default: all)")
    tables.add_format_options(probe)
    probe.set_defaults(run=_probe)

    part = sub.add_parser("partition", help="time VulkanPartitioner.partition on Blocks(N)")
    part.add_argument("--blocks", nargs="+", required=True, metavar="N")
    part.add_argument("--repeat", type=int, metavar="N",
                      help="partition each size N times; print the spread under wall and CPU clocks")
    tables.add_format_options(part)
    part.set_defaults(run=_partition)

    pol = sub.add_parser("policies", help="lower every LeRobot policy entry; what blocks the rest")
    pol.add_argument("--policy", action="append", metavar="NAME", help="policy or entry (repeatable)")
    tables.add_format_options(pol)
    pol.set_defaults(run=_policies)

    doctor = sub.add_parser("doctor", help="versions, runtime backends, Vulkan runtime and device")
    doctor.add_argument("--json", action="store_true")
    doctor.add_argument("--settings", action="store_true", help="only the VKBENCH_* settings table")
    doctor.set_defaults(run=_doctor)

    record = sub.add_parser(
        "record", help="asv run for the installed ExecuTorch release (offline ledger), then publish"
    )
    record.add_argument("--no-publish", action="store_true")
    record.add_argument("--release", metavar="VERSION",
                        help="file under this ledger release instead of the installed executorch")
    record.add_argument("--tier", choices=list(TIERS),
                        help="select the tier's benchmarks (asv -b pattern; see vkbench/tiers.py)")
    record.set_defaults(run=_record)

    from vkbench.execution.commands import add_parser as add_runtime_parser  # run, limit, export, ...

    add_runtime_parser(sub)

    cost = sub.add_parser("cost", help="per commit and tier: asv wall time, unique work, efficiency")
    cost.add_argument("--results", type=Path, default=Path(__file__).resolve().parent.parent / "results"
                      / "releases", help="an asv results directory (default: results/releases)")
    cost.add_argument("--tier", action="append", choices=list(TIERS), help="tiers to report (repeatable)")
    tables.add_format_options(cost)
    cost.set_defaults(run=_cost)

    shards = sub.add_parser("shards", help="split commits into CI-job shards sized by the measured cost")
    shards.add_argument("--hashes", type=Path, required=True, help="file with one commit hash per line")
    shards.add_argument("--tier", choices=["gate", "standard", "full"], default="gate")
    shards.add_argument("--budget", type=float, default=300.0, metavar="MIN", help="minutes per job")
    shards.add_argument("--results", type=Path, action="append", default=[], metavar="DIR",
                        help="asv results dirs with measured costs (repeatable)")
    shards.add_argument("--out", type=Path, help="also write shard-<i>.txt hash files here")
    shards.set_defaults(run=_shards)

    summary = sub.add_parser("summary", help="coverage and timings last recorded for this release")
    summary.set_defaults(run=lambda args: __import__("vkbench.summary").summary.main())

    pub = sub.add_parser("publish", help="asv publish the recorded releases (offline site in html/)")
    pub.set_defaults(run=lambda args: __import__("vkbench.ledger").ledger.publish())
    record.add_argument("asv_args", nargs=argparse.REMAINDER, help="extra arguments for asv run")
    record.set_defaults(run=_record)

    # Listed here for --help; main() hands their arguments to the modules' own parsers.
    sub.add_parser("site", help="the offline site: make-offline, dashboard, vendor, coverage", add_help=False)
    sub.add_parser("build", help="build ExecuTorch: full (a Vulkan-enabled overlay), aot, glslc, conf",
                   add_help=False)

    docs = sub.add_parser("docs", help="regenerate the measured tables in docs/ from vkbench's own output")
    docs.add_argument("names", nargs="*", metavar="SECTION",
                      help="sections to refresh (default: all): " + ", ".join(_doc_sections()))
    docs.add_argument("--policies-json", type=Path, metavar="PATH",
                      help="render the policies section from a saved `vkbench policies --json`")
    docs.set_defaults(run=lambda args: __import__("vkbench.docs").docs.main(args.names, args.policies_json))

    from vkbench.upstream import add_parser as add_upstream_parser  # asv over a local upstream mirror

    add_upstream_parser(sub)
    return parser


def _doc_sections() -> list[str]:
    from vkbench.docs import SECTIONS

    return list(SECTIONS)


def main(argv: Sequence[str] | None = None) -> int:
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["site"]:
        from vkbench.site.__main__ import main as site_main

        return site_main(argv[1:])
    if argv[:1] == ["build"]:
        from vkbench.build.__main__ import main as build_main

        return build_main(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except UsageError as error:
        print(f"vkbench {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
