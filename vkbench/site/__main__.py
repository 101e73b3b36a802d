"""``vkbench site {make-offline, dashboard, vendor, coverage} [HTML_ROOT]`` (``python -m vkbench.site``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vkbench site")
    sub = parser.add_subparsers(dest="command", required=True)
    mk = sub.add_parser("make-offline", help="vendor assets; dashboard, coverage, runtime pages")
    mk.add_argument("html_root", type=Path, nargs="?", default=Path("html"))
    mk.add_argument("--no-coverage", action="store_true", help="only list cached coverage")
    mk.add_argument("--results", type=Path, default=None, help="results tree the dashboard reads (results/)")
    db = sub.add_parser("dashboard", help="only (re)write HTML_ROOT/index.html, the dashboard")
    db.add_argument("html_root", type=Path, nargs="?", default=Path("html"))
    db.add_argument("--results", type=Path, default=None, help="results tree to read (default: results/)")
    sub.add_parser("vendor", help="refresh vkbench/site/vendor from the npm registry (npm pack)")
    cv = sub.add_parser("coverage", help="compute (and cache) coverage of the ExecuTorch importable here")
    cv.add_argument("--refresh", action="store_true")
    cv.add_argument("--policies", action="store_true", help="also survey the fast vkbench.policies entries")
    args = parser.parse_args(argv)
    if args.command == "make-offline":
        from vkbench.site import make_offline

        report = make_offline(args.html_root, coverage=not args.no_coverage, results_root=args.results)
        print(json.dumps(report, indent=2))
    elif args.command == "dashboard":
        from vkbench.site.dashboard import RESULTS_ROOT, write_dashboard

        print(write_dashboard(args.html_root, args.results or RESULTS_ROOT))
    elif args.command == "vendor":
        from vkbench.site.assets import vendor

        manifest = vendor()
        for asset in manifest["assets"]:
            print(f"{asset['package']}@{asset['version']}  {asset['member']} -> vendor/{asset['local']}")
    else:
        from vkbench.site.coverage import collect

        data = collect(refresh=args.refresh, policies=args.policies)
        print(f"{len(data['rows'])} rows for executorch {data['executorch']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
