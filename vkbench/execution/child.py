"""The isolated child of :func:`vkbench.execution.measure.measure_isolated` (private).

``python -m vkbench.execution.child WORKLOAD --runner R... --backend B...``
measures one workload and prints one :class:`~vkbench.execution.outcome.Outcome`
JSON line per (backend, runner) as soon as it finishes, and one (error
``measure.PENDING``) as it starts loading and executing, so the parent knows
where an abort stopped it. lerobot prints model sizes on
stdout while building, so everything but those lines goes to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys

from vkbench.execution.bundle import BACKENDS
from vkbench.execution.measure import measure
from vkbench.execution.outcome import Outcome
from vkbench.execution.runners import RUNNERS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vkbench.execution.child", description=__doc__)
    parser.add_argument("workload")
    parser.add_argument("--runner", nargs="+", choices=list(RUNNERS), default=["python"])
    parser.add_argument("--backend", nargs="+", choices=list(BACKENDS), default=list(BACKENDS))
    parser.add_argument("--delegate-only", default=None,
                        help="comma-separated op types the Vulkan partitioner may take (empty: none)")
    args = parser.parse_args(argv)
    logging.disable(logging.INFO)
    report = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        def line(outcome: Outcome) -> None:
            print(json.dumps(outcome.to_json()), file=report, flush=True)

        only = None if args.delegate_only is None else [op for op in args.delegate_only.split(",") if op]
        measure(args.workload, args.backend, args.runner, report=line, progress=line, delegate_only=only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
