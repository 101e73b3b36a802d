"""``vkbench``: the one command line (``vkbench --help`` lists the subcommands).

Human tables by default; ``--json`` prints one JSON document on stdout.
Bad input prints one line on stderr and exits 2.

Each command group is a module here with ``add_parser(subparsers)`` and small
handlers that turn the parsed arguments into typed calls of the domain
modules (which never parse a command line, and never import this package):
:mod:`~vkbench.cli.lowering_commands` (probe, partition, policies),
:mod:`~vkbench.cli.doctor`, :mod:`~vkbench.cli.results` (record, publish,
summary, cost, shards), :mod:`~vkbench.cli.runtime`,
:mod:`~vkbench.cli.history` (changes, history),
:mod:`~vkbench.cli.gate` (the verdict on one change),
:mod:`~vkbench.cli.suite` (node orders, equivalence across suite changes), :mod:`~vkbench.cli.bugs`,
:mod:`~vkbench.cli.upstream`,
:mod:`~vkbench.cli.site`,
:mod:`~vkbench.cli.build` and :mod:`~vkbench.cli.docs`. Building the parser
imports nothing heavy: ``python -m vkbench build asv-build`` runs in asv's
bare virtualenv.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

from vkbench.cli import (
    bugs,
    build,
    docs,
    doctor,
    gate,
    history,
    lowering_commands,
    results,
    runtime,
    site,
    suite,
    upstream,
)
from vkbench.cli.common import EXIT_USAGE, UsageError

__all__ = ["EXIT_USAGE", "UsageError", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The ``vkbench`` parser: every command group's verbs, in ``--help`` order."""
    parser = argparse.ArgumentParser(prog="vkbench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    groups = (lowering_commands, doctor, results, gate, history, suite, runtime, bugs, upstream, site, build,
              docs)
    for group in groups:
        group.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``vkbench`` command; its exit status (2 and one stderr line for bad input)."""
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        return args.run(args)
    except UsageError as error:
        print(f"vkbench {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
