"""``vkbench suite {node-orders,equivalence,torch-compare}``: how the suite's own measurements behave.

``suite node-orders`` measures how much torch.fx's ``propose_partitions`` work and CPU time move
with the order of graph nodes (:mod:`vkbench.workloads.node_orders`); ``suite equivalence``
re-measures benchmark modules on reference commits after a change of vkbench's own code and, where
every count is equal, stores the record that keeps their asv series (:mod:`vkbench.suite.equivalence`);
``suite torch-compare`` lowers the probes and fast policy entries under two interpreters (two torch
versions) and says which counts differ (:mod:`vkbench.runs.torch_compare`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vkbench import tables
from vkbench.cli.common import Subparsers, UsageError, add_format_options


def add_parser(sub: Subparsers) -> None:
    """Register ``suite``."""
    suite = sub.add_parser("suite", help="the suite's own measurements: node orders, equivalence "
                                         "across changes")
    verbs = suite.add_subparsers(dest="verb", required=True)
    orders = verbs.add_parser("node-orders", help="propose_partitions events and CPU time of Blocks(n) under "
                                                  "several node orders (first-hash offsets, address layouts)")
    orders.add_argument("--blocks", type=int, nargs="+", default=[50, 100, 200])
    orders.add_argument("--address-runs", type=int, default=8,
                        help="fresh interpreters with real id() hashes")
    orders.add_argument("--jobs", type=int, default=1,
                        help="partitions at once, each in a fresh interpreter (a machine with many cores)")
    orders.add_argument("--out", type=Path, help="default: results/history/node-orders.json")
    orders.add_argument("--show", action="store_true", help="only print the stored measurement")
    add_format_options(orders)
    orders.set_defaults(run=_node_orders)

    same = verbs.add_parser("equivalence", help="re-measure reference commits under the changed suite; store "
                                                "which classes keep their asv series (every count equal)")
    same.add_argument("--mirror", type=Path, required=True, help="a local mirror of pytorch/executorch")
    same.add_argument("--lane", action="append", required=True, metavar="C1,C2",
                      help="commits measured back to back by one asv process; lanes run side by "
                           "side")
    same.add_argument("--machine", default="x86_64-2core-cpu",
                      help="the asv machine the recorded values are of")
    same.add_argument("--results", type=Path, help="recorded results (default: results/upstream)")
    same.add_argument("--keep", type=Path, help="keep the re-measured results here (default: a temp dir)")
    same.add_argument("--measured", type=Path, help="judge the lanes an earlier run kept here (--keep); "
                                                    "measure nothing")
    same.set_defaults(run=_equivalence)

    torch = verbs.add_parser("torch-compare", help="lower the probes and fast policy entries under two "
                                                   "interpreters (two torch versions); compare the counts")
    torch.add_argument("--python", action="append", default=[], metavar="PYTHON",
                       help="an interpreter that imports torch and executorch (give A, then B)")
    torch.add_argument("--probes-only", action="store_true", help="leave the policy entries out")
    torch.add_argument("--keep", type=Path, help="keep each side's JSON (a.json, b.json) and logs here")
    torch.add_argument("--measured", type=Path, help="compare what an earlier run kept (--keep); run nothing")
    torch.add_argument("--make-overlay", type=Path, metavar="DIR",
                       help="make interpreter B instead: a venv at DIR with only --torch and --torchvision, "
                            "every other package from --base-python")
    torch.add_argument("--torch", help="torch version for --make-overlay (e.g. 2.13.0)")
    torch.add_argument("--torchvision", help="torchvision version for --make-overlay (e.g. 0.28.0)")
    torch.add_argument("--base-python", default=sys.executable, help="default: this interpreter")
    torch.add_argument("--with", dest="extra", action="append", default=[], metavar="REQ",
                       help="also install REQ (--no-deps) into the overlay: a CUDA library the PyPI torch "
                            "pins newer than the base's, e.g. nvidia-nccl-cu13==2.29.7 for torch 2.13.0")
    add_format_options(torch)
    torch.set_defaults(run=_torch_compare)


def _node_orders(args: argparse.Namespace) -> int:
    from vkbench.workloads import node_orders

    out = args.out or node_orders.PATH
    if args.show:
        try:
            spreads = node_orders.from_json(json.loads(out.read_text()))
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise UsageError(f"{out}: {error}") from None
    else:
        if any(size < 1 for size in args.blocks) or args.address_runs < 0 or args.jobs < 1:
            raise UsageError("--blocks and --jobs must be positive and --address-runs not negative")

        def store(spread: node_orders.OrderSpread) -> None:  # each size as it ends, beside those stored
            try:
                stored = node_orders.from_json(json.loads(out.read_text()))
            except (OSError, ValueError, KeyError, TypeError):
                stored = []
            out.parent.mkdir(parents=True, exist_ok=True)
            merged = node_orders.merged(stored, spread)
            out.write_text(json.dumps(node_orders.to_json(merged), indent=1) + "\n")

        node_orders.measure(tuple(args.blocks), address_runs=args.address_runs, done=store, jobs=args.jobs,
                            progress=lambda what: print(f"  {what}", file=sys.stderr, flush=True))
        spreads = node_orders.from_json(json.loads(out.read_text()))
    if args.json:
        print(json.dumps(node_orders.to_json(spreads), indent=1))
        return 0
    print(tables.draw(args.markdown)(node_orders.SUMMARY_HEADER, node_orders.summary_rows(spreads)))
    for spread in spreads:
        print(f"Blocks({spread.blocks}): events vs CPU seconds of {node_orders.PHASE} over the first-hash "
              f"orders, Pearson r = {node_orders.correlation(spread):.2f} ({spread.environment})")
    return 0


def _equivalence(args: argparse.Namespace) -> int:
    from vkbench.paths import RESULTS_ROOT
    from vkbench.runs import equivalence_run as runner

    lanes = [[c.strip() for c in lane.split(",") if c.strip()] for lane in args.lane]
    if not all(lanes) or not args.mirror.exists():
        raise UsageError(f"give commits per --lane and an existing --mirror (not "
                         f"{args.mirror})")
    recorded = args.results or RESULTS_ROOT / "upstream"
    records, commands = runner.run(args.mirror, recorded, lanes, args.machine,
                                   keep=args.keep, measured=args.measured)
    for command in commands:
        print(command, file=sys.stderr)
    rows = [[r.module, r.old, r.new, ", ".join(r.kept), ", ".join(r.restarted)] for r in records]
    print(tables.render(["module", "recorded", "now", "kept", "restarted"], rows))
    return 0 if records else 1


def _torch_compare(args: argparse.Namespace) -> int:
    from vkbench.runs import torch_compare as compare

    def progress(line: str) -> None:
        print(f"  {line}", file=sys.stderr, flush=True)

    try:
        if args.make_overlay:
            if not (args.torch and args.torchvision):
                raise UsageError("--make-overlay needs --torch and --torchvision")
            made = compare.make_overlay(args.make_overlay, args.torch, args.torchvision, args.base_python,
                                        args.extra, progress)
            print(f"{made['interpreter']}: torch {made['torch']}, executorch {made['executorch']}")
            return 0
        if args.measured:
            result = compare.measured(args.measured)
        else:
            result = compare.run(args.python, probes_only=args.probes_only, keep=args.keep, progress=progress)
    except compare.TorchCompareError as error:
        raise UsageError(str(error)) from None
    print(json.dumps(result.to_json(), indent=1) if args.json else compare.report(result, args.markdown))
    return result.exit_code
