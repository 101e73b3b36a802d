"""``vkbench gate BASE HEAD``: the verdict on one change, for a PR (:mod:`vkbench.runs.gate_run`).

Exit 0: no confirmed regression; 1: a confirmed regression (named in the table and the report);
2: bad input (an unknown commit, no mirror). ``--report`` writes the markdown a CI job posts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from vkbench.cli.common import Subparsers, UsageError


def add_parser(sub: Subparsers) -> None:
    """Register ``gate``."""
    gate = sub.add_parser("gate", help="measure BASE and HEAD's exact counts, re-measure any failing step, "
                                       "exit 1 only for a confirmed regression")
    gate.add_argument("base", help="the commit the change starts from")
    gate.add_argument("head", help="the commit to judge")
    where = gate.add_mutually_exclusive_group(required=True)
    where.add_argument("--mirror", type=Path, help="a local mirror of pytorch/executorch")
    where.add_argument("--repo", type=Path, help="a local ExecuTorch git repository (with --config)")
    gate.add_argument("--config", type=Path, help="the asv config (default: the upstream one, for --mirror)")
    gate.add_argument("--machine", default="vkbench-gate", help="asv machine name of the scratch runs")
    gate.add_argument("--factor", type=float, default=None, help="a counted phase fails at this ratio "
                                                                "(default 1.02)")
    gate.add_argument("--policies", action="store_true",
                      help="also compare the 14 fast policy entries' coverage (minutes more a side)")
    gate.add_argument("--pattern", default=None, help="an asv -b pattern replacing what is compared")
    gate.add_argument("--fresh", action="store_true", help="measure both sides, even one an earlier gate run "
                                                         "of the same commit, suite and stack kept")
    gate.add_argument("--report", type=Path, help="write the markdown report here")
    gate.add_argument("--json", action="store_true", help="the rows as one JSON document on stdout")
    gate.set_defaults(run=_gate)


def _gate(args: argparse.Namespace) -> int:
    from vkbench.git import GitError, commit_of
    from vkbench.results import verdict
    from vkbench.runs import gate_run as gate
    from vkbench.runs.upstream_asv import DEFAULT_CONFIG, git_dir, write_config

    source = args.mirror or args.repo
    if not source.exists():
        raise UsageError(f"{source}: no such repository")
    if args.repo and not args.config:
        raise UsageError("--repo needs --config (an asv config whose repo is that repository)")
    if args.factor is not None and args.factor <= 1.0:
        raise UsageError(f"--factor must be above 1 (not {args.factor})")
    gdir = git_dir(source) if args.mirror else source / ".git"
    commits = []
    for ref in (args.base, args.head):
        try:
            commits.append(commit_of(ref, git_dir=gdir))
        except GitError:
            raise UsageError(f"{ref}: not a commit of {source}") from None
    config = args.config or write_config(DEFAULT_CONFIG)
    try:
        with _asv_to_stderr():
            found = gate.gate(source, config, commits[0], commits[1], args.machine,
                              factor=args.factor or verdict.FACTOR,
                              pattern=args.pattern or gate.selection(args.policies), fresh=args.fresh)
    except gate.GateError as error:
        raise UsageError(str(error)) from None
    repro = gate.repro(args.base, args.head, source, bool(args.mirror))
    text = verdict.report(args.base, args.head, found.rows, found.compared, repro, found.runs, found.reused)
    if args.report:
        args.report.write_text(text)
    if args.json:
        print(json.dumps({"base": commits[0], "head": commits[1], "exit": found.exit_status,
                          "compared": found.compared, "rows": [row.to_json() for row in found.rows],
                          "runs": found.runs, "asv_exit": found.codes, "reused": found.reused}, indent=1))
    else:
        print(text)
    return found.exit_status


@contextlib.contextmanager
def _asv_to_stderr() -> Iterator[None]:
    """asv's own output (the child processes write to file descriptor 1) goes to stderr while both
    sides are measured, so stdout holds only the report or the JSON."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
