"""``vkbench upstream --mirror DIR -- ASV_ARGS...``: asv over upstream commits from a local mirror."""

from __future__ import annotations

import argparse
from pathlib import Path

from vkbench.cli.common import Subparsers, UsageError
from vkbench.runs.upstream_asv import DEFAULT_CONFIG, STATE_DIR
from vkbench.suite.tiers import TIERS

_EPILOG = """examples:
  vkbench upstream --mirror /srv/mirrors/executorch.git -- run HASHFILE:hashes.txt -b ProbeCoverage
  vkbench upstream --mirror /srv/mirrors/executorch.git -- run v1.3.0^! -b ProbeCoverage
  vkbench upstream --mirror /srv/mirrors/executorch.git --tier gate --split 2 -- run HASHFILE:hashes.txt
  vkbench upstream --mirror /srv/mirrors/executorch.git -- continuous v1.4.0 main
  vkbench upstream --mirror /srv/mirrors/executorch.git -- publish

results: results/upstream/<machine>/ (asv.conf.json's results_dir); asv's own clone of
the mirror: .asv/executorch (publish keeps only its release tags vX.Y.Z, made first if absent);
mirror facts, git template, config: .asv/upstream*.
Pass commits as hashes (HASHFILE:) or ranges (TAG^!): given tag names, asv 0.6 records them."""


def add_parser(sub: Subparsers) -> None:
    """Register ``vkbench upstream``."""
    parser = sub.add_parser(
        "upstream", help="asv over upstream ExecuTorch commits from a local git mirror (offline)",
        description="Run an asv subcommand over upstream ExecuTorch commits from a local git mirror "
        "(no network). Git is redirected through GIT_CONFIG_* variables only, no config file is "
        "written: upstream's URL -> the mirror, submodules skipped, paths whose blobs the mirror "
        "lacks left out of checkouts (sparse checkout).",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirror", type=Path, required=True,
                        help="git dir (bare or not) of a mirror of pytorch/executorch")
    parser.add_argument("--machine", default=None,
                        help="asv machine name (default: $VKBENCH_MACHINE or <arch>-<N>core-cpu)")
    parser.add_argument("--config-out", type=Path, default=DEFAULT_CONFIG,
                        help="where to write the derived asv config (default: .asv/upstream.conf.json)")
    parser.add_argument("--state-dir", type=Path, default=STATE_DIR,
                        help="mirror facts cache and git template (default: .asv/upstream/)")
    parser.add_argument("--tier", choices=list(TIERS),
                        help="add the tier's asv -b pattern (run, continuous, find; "
                             "see vkbench/suite/tiers.py)")
    parser.add_argument("--split", type=int, default=1, metavar="N",
                        help="asv run only: deal the -b pattern's alternatives to N asv processes side "
                             "by side (own environments and results folders), merged after; on 2 cores "
                             "--split 2 (vkbench/runs/benchmark_split.py)")
    parser.add_argument("asv_args", nargs=argparse.REMAINDER,
                        help="-- then an asv subcommand and its arguments (run, continuous, compare, find, "
                             "publish, ...)")
    parser.set_defaults(run=_upstream)


def _upstream(args: argparse.Namespace) -> int:
    from vkbench.git import GitError
    from vkbench.results.recording import RecordingError
    from vkbench.runs.ledger import machine_name
    from vkbench.runs.upstream_asv import UpstreamError, run

    if args.split < 1:
        raise UsageError(f"--split takes a number of asv processes, at least 1 (got {args.split})")
    try:
        return run(args.mirror, args.asv_args, args.machine or machine_name(), args.config_out,
                   args.state_dir, args.tier, args.split)
    except (UpstreamError, GitError, RecordingError) as error:  # a mirror git cannot read, a shared file
        # the run's rows cannot be merged into (its own folder is kept): one line, not a traceback
        raise UsageError(str(error)) from error
