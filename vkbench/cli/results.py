"""``vkbench record | publish | summary | cost | shards``: recording asv results and reading them back."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vkbench.cli.common import Subparsers, UsageError, add_format_options
from vkbench.paths import RESULTS_ROOT, ROOT
from vkbench.suite.tiers import TIERS


def add_parser(sub: Subparsers) -> None:
    """Register ``record``, ``publish``, ``summary``, ``cost`` and ``shards``."""
    record = sub.add_parser(
        "record", help="asv run for the installed ExecuTorch release (offline ledger), then publish"
    )
    record.add_argument("--no-publish", action="store_true")
    record.add_argument("--release", metavar="VERSION",
                        help="file under this ledger release instead of the installed executorch")
    record.add_argument("--tier", choices=list(TIERS),
                        help="select the tier's benchmarks (asv -b pattern; see vkbench/suite/tiers.py)")
    record.add_argument("asv_args", nargs=argparse.REMAINDER, help="extra arguments for asv run")
    record.set_defaults(run=_record)

    pub = sub.add_parser("publish", help="asv publish the recorded releases (offline site in html/)")
    pub.set_defaults(run=_publish)

    summary = sub.add_parser("summary", help="coverage and timings last recorded for this release")
    summary.set_defaults(run=_summary)

    cost = sub.add_parser("cost", help="per commit and tier: asv wall time, unique work, efficiency")
    cost.add_argument("--results", type=Path, default=RESULTS_ROOT / "releases",
                      help="an asv results directory (default: results/releases)")
    cost.add_argument("--tier", action="append", choices=list(TIERS), help="tiers to report (repeatable)")
    cost.add_argument("--classes", type=Path, default=RESULTS_ROOT / "history" / "classes-gate.json",
                      help="classes of the upstream range, to show what each commit answers")
    add_format_options(cost)
    cost.set_defaults(run=_cost)

    shards = sub.add_parser("shards", help="split commits into CI-job shards sized by the measured cost")
    shards.add_argument("--hashes", type=Path, required=True, help="file with one commit hash per line")
    shards.add_argument("--tier", choices=["gate", "standard", "full"], default="gate")
    shards.add_argument("--budget", type=float, default=300.0, metavar="MIN", help="minutes per job")
    shards.add_argument("--results", type=Path, action="append", default=[], metavar="DIR",
                        help="asv results dirs with measured costs (repeatable)")
    shards.add_argument("--out", type=Path, help="also write shard-<i>.txt hash files here")
    shards.set_defaults(run=_shards)


def _record(args: argparse.Namespace) -> int:
    from vkbench.runs.ledger import record_installed
    from vkbench.suite.tiers import bench_args

    asv_args = [a for a in args.asv_args if a != "--"]
    if args.tier:
        asv_args = bench_args(args.tier) + asv_args
    from vkbench.results.recording import RecordingError

    try:
        code = record_installed(asv_args, release_version=args.release, tier=args.tier)
    except RecordingError as error:  # a shared file the run cannot merge into: named, its files kept
        raise UsageError(str(error)) from None
    return code if args.no_publish else publish() or code


def _publish(args: argparse.Namespace) -> int:
    return publish()


def publish() -> int:
    """``asv publish`` the releases, then the offline site around them (when asv succeeded)."""
    from vkbench.runs import ledger
    from vkbench.site import make_offline

    code = ledger.publish()
    if code == 0:
        make_offline(ROOT / "html", results_root=RESULTS_ROOT)
    return code


def _summary(args: argparse.Namespace) -> int:
    return summary()


def summary() -> int:
    """What the last ``vkbench record`` stored for the installed release on this machine."""
    from vkbench.core.versions import executorch_identity
    from vkbench.results.summary import summary as print_summary
    from vkbench.runs.ledger import RESULTS_DIR, load_manifest, machine_name

    version = str(executorch_identity()["version"])
    release = next((r for r in load_manifest() if r.version == version), None)
    return print_summary(version, release.commit if release else None,
                         release.git_version if release else None, machine_name(), RESULTS_DIR)


def _cost(args: argparse.Namespace) -> int:
    return cost(args.results, args.tier, args.classes, as_json=args.json, markdown=args.markdown)


def cost(results: Path, tiers: list[str] | None, classes_file: Path | None = None, *, as_json: bool = False,
         markdown: bool = False) -> int:
    """Print the asv wall time, unique work and efficiency per commit and tier of ``results``.

    An unreadable result file is one line on stderr; every other file is still reported. With
    the classes of the range, each row says which class the commit measures and how many commits
    that answers (the cost of a class is the cost of its one measured commit).
    """
    from vkbench.commits.classes import Classes
    from vkbench.results.asv_files import read_dir
    from vkbench.results.cost import costs, render

    if not (results / "benchmarks.json").is_file():
        raise UsageError(f"{results} holds no asv results (no benchmarks.json)")
    found = read_dir(results)
    for problem in found.problems:
        print(f"vkbench cost: skipped {problem}", file=sys.stderr)
    rows = costs(found, tiers)
    classes = Classes.read(classes_file) if classes_file and classes_file.is_file() else None
    index = {c: (i, len(k.commits)) for i, k in enumerate(classes.classes) for c in k.commits} if classes \
        else {}
    if as_json:
        print(json.dumps({"costs": [{**r.to_json(), **({"class": index[r.commit][0], "class_commits":
                                                        index[r.commit][1]} if r.commit in index else {})}
                                    for r in rows]}, indent=2))
    else:
        print(render(rows, markdown=markdown, classes=index))
    return 0


def _shards(args: argparse.Namespace) -> int:
    return shards(args.hashes, args.tier, args.budget, args.results, args.out)


def shards(hashes: Path, tier: str, budget_minutes: float, results: list[Path],
           out: Path | None = None) -> int:
    """Print the shard plan (JSON) for the commits in ``hashes``; also write ``out/shard-<i>.txt``."""
    from vkbench.results.commit_shards import plan, read_hashes, to_json

    try:
        result = plan(read_hashes(hashes), tier, budget_minutes, results)
    except (OSError, ValueError) as error:
        raise UsageError(str(error)) from error
    if out:
        out.mkdir(parents=True, exist_ok=True)
        for index, shard in enumerate(result.shards):
            (out / f"shard-{index}.txt").write_text("\n".join(shard) + "\n")
    print(to_json(result))
    return 0
