"""What every command group of :mod:`vkbench.cli` shares: the usage error and the output switch.

Kept apart from ``vkbench/cli/__init__.py`` so the group modules can import it
while the package imports them (no import cycle).
"""

from __future__ import annotations

import argparse

#: Exit status for bad input (argparse's own).
EXIT_USAGE = 2

#: What ``add_subparsers()`` returns (a private argparse type), named once for every ``add_parser``.
Subparsers = argparse._SubParsersAction


class UsageError(Exception):
    """Bad input from the user: one line on stderr, exit 2."""


def add_format_options(parser: argparse.ArgumentParser) -> None:
    """``--json`` | ``--markdown``: the output choice every table-printing subcommand shares."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--json", action="store_true", help="one JSON document on stdout")
    group.add_argument("--markdown", action="store_true", help="a markdown table")
