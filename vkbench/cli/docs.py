"""``vkbench docs [SECTION ...]``: regenerate the measured tables in ``docs/`` from vkbench's own output."""

from __future__ import annotations

import argparse
from pathlib import Path

from vkbench.cli.common import Subparsers
from vkbench.runs.doc_sections import SECTIONS


def add_parser(sub: Subparsers) -> None:
    """Register ``docs``."""
    docs = sub.add_parser("docs", help="regenerate the measured tables in docs/ from vkbench's own output")
    docs.add_argument("names", nargs="*", metavar="SECTION",
                      help="sections to refresh (default: all): " + ", ".join(SECTIONS))
    docs.add_argument("--policies-json", type=Path, metavar="PATH",
                      help="render the policies section from a saved `vkbench policies --json`")
    docs.set_defaults(run=_docs)


def _docs(args: argparse.Namespace) -> int:
    from vkbench.runs.doc_sections import main as regenerate

    return regenerate(args.names, args.policies_json)
