"""``vkbench site make-offline | dashboard | vendor | coverage``: the offline site in ``html/``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vkbench.cli.common import Subparsers, UsageError
from vkbench.paths import RESULTS_ROOT


def add_parser(sub: Subparsers) -> None:
    """Register ``site`` and its subcommands."""
    site = sub.add_parser("site", help="the offline site: make-offline, dashboard, vendor, coverage",
                          description="The offline site in html/: vendored assets, dashboard, coverage "
                                      "and runtime pages.")
    actions = site.add_subparsers(dest="action", required=True)
    mk = actions.add_parser("make-offline", help="vendor assets; dashboard, coverage, runtime pages")
    mk.add_argument("html_root", type=Path, nargs="?", default=Path("html"))
    mk.add_argument("--no-coverage", action="store_true", help="only list cached coverage")
    mk.add_argument("--results", type=Path, default=None, help="results tree every page reads (results/)")
    mk.set_defaults(run=_make_offline)
    db = actions.add_parser("dashboard", help="only (re)write HTML_ROOT/index.html, the dashboard")
    db.add_argument("html_root", type=Path, nargs="?", default=Path("html"))
    db.add_argument("--results", type=Path, default=None, help="results tree to read (default: results/)")
    db.set_defaults(run=_dashboard)
    vendor = actions.add_parser("vendor", help="refresh vkbench/site/vendor from the npm registry (npm pack)")
    vendor.set_defaults(run=_vendor)
    cv = actions.add_parser("coverage", help="compute (and cache) coverage of the ExecuTorch importable here")
    cv.add_argument("--refresh", action="store_true")
    cv.add_argument("--policies", action="store_true",
                    help="also survey the fast vkbench.workloads.policies entries")
    cv.add_argument("--survey", type=Path, metavar="FILE",
                    help="the policy rows from this saved survey (results/policies/executorch-<version>-"
                         "<machine>.json, of the importable ExecuTorch) instead of surveying again")
    cv.set_defaults(run=_coverage)


def _make_offline(args: argparse.Namespace) -> int:
    from vkbench.site import make_offline

    report = make_offline(args.html_root, coverage=not args.no_coverage,
                          results_root=args.results or RESULTS_ROOT)
    print(json.dumps(report, indent=2))
    return 0


def _dashboard(args: argparse.Namespace) -> int:
    from vkbench.site import dashboard
    from vkbench.site.load import load_site_data

    print(dashboard.PAGE.write(args.html_root, load_site_data(args.html_root, args.results or RESULTS_ROOT)))
    return 0


def _vendor(args: argparse.Namespace) -> int:
    from vkbench.site.assets import vendor

    manifest = vendor()
    for asset in manifest["assets"]:
        print(f"{asset['package']}@{asset['version']}  {asset['member']} -> vendor/{asset['local']}")
    return 0


def _coverage(args: argparse.Namespace) -> int:
    from vkbench.site.coverage_sets import collect

    if args.survey is not None and args.policies:
        raise UsageError("site coverage: --survey or --policies, not both (both give the policy rows)")
    try:
        data = collect(refresh=args.refresh, policies=args.policies, survey=args.survey)
    except ValueError as error:  # an unreadable survey, or one of another ExecuTorch
        raise UsageError(str(error)) from None
    print(f"{len(data['rows'])} rows for executorch {data['executorch']}", file=sys.stderr)
    return 0
