"""``vkbench changes | history {inputs,suite-inputs,classes,bisect}``: the recorded range, explained.

``history inputs`` finds what a workload set's lowering reads of ExecuTorch
(by running it), ``history suite-inputs`` what each benchmark module's records
read of vkbench itself (the files its benchmarks' asv version digests),
``history classes`` groups a range's first-parent commits
into runs of identical lowering inputs, ``history bisect`` finds the class
where one benchmark's value steps, and ``changes`` lists every step of the
recorded counts with the commit that caused it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vkbench import tables
from vkbench.cli.common import Subparsers, UsageError, add_format_options
from vkbench.paths import RESULTS_ROOT

HISTORY = RESULTS_ROOT / "history"


def classes_path(workloads: str) -> Path:
    return HISTORY / f"classes-{workloads}.json"


def inputs_path(workloads: str) -> Path:
    return HISTORY / f"inputs-{workloads}.json"


def add_parser(sub: Subparsers) -> None:
    """Register ``changes`` and ``history``."""
    from vkbench.commits.fingerprint import WORKLOAD_SETS

    changes = sub.add_parser("changes", help="every step of a recorded count, on the commit that caused it")
    changes.add_argument("--results", type=Path, default=RESULTS_ROOT / "upstream",
                         help="an asv results directory (default: results/upstream)")
    changes.add_argument("--classes", type=Path, default=classes_path("gate"),
                         help="classes of the range (default: results/history/classes-gate.json)")
    add_format_options(changes)
    changes.set_defaults(run=_changes)

    history = sub.add_parser("history", help="lowering inputs, the suite's own inputs, classes of a range, "
                                             "bisection over classes")
    verbs = history.add_subparsers(dest="verb", required=True)
    inputs = verbs.add_parser("inputs", help="lower a workload set here and list what it read of executorch")
    inputs.add_argument("--workloads", choices=WORKLOAD_SETS, default="gate")
    inputs.add_argument("--out", type=Path, help="default: results/history/inputs-<workloads>.json")
    inputs.set_defaults(run=_inputs)

    suite = verbs.add_parser("suite-inputs", help="run each benchmark module's records here and list the "
                                                  "vkbench files they read (their asv version's digest)")
    suite.add_argument("modules", nargs="*", help="benchmark modules (default: every benchmarks/bench_*.py)")
    suite.add_argument("--results", type=Path, action="append", metavar="DIR",
                       help="recorded results whose sidecars' suite_reads widen the lists; repeatable "
                            "(default: results/upstream and results/releases)")
    suite.add_argument("--out", type=Path, help="default: results/history/suite-inputs.json")
    suite.set_defaults(run=_suite_inputs)

    classes = verbs.add_parser("classes", help="group a range's first-parent commits by lowering inputs")
    classes.add_argument("--mirror", type=Path, required=True, help="git dir of a pytorch/executorch mirror")
    classes.add_argument("--workloads", choices=WORKLOAD_SETS, default="gate")
    classes.add_argument("range", help="a git range, e.g. dbcf6ac7..cff6f4dd")
    classes.add_argument("--out", type=Path, help="default: results/history/classes-<workloads>.json")
    classes.add_argument("--inputs", type=Path, help="default: results/history/inputs-<workloads>.json")
    classes.add_argument("--results", type=Path, default=RESULTS_ROOT / "upstream",
                         help="recorded commits (default: results/upstream): their reads widen the input set")
    classes.add_argument("--unmeasured", type=Path, metavar="FILE",
                         help="write the first commit of every class no recorded commit answers, one per "
                              "line (what a daily run measures)")
    add_format_options(classes)
    classes.set_defaults(run=_classes)

    bisect = verbs.add_parser("bisect", help="record class first commits until one benchmark's step is found")
    bisect.add_argument("--mirror", type=Path, required=True)
    bisect.add_argument("--classes", type=Path, default=classes_path("gate"))
    bisect.add_argument("--machine", default=None, help="asv machine (default: as vkbench upstream)")
    bisect.add_argument("benchmark", help="e.g. bench_probes.ProbeFailure.track_lowering_failed")
    bisect.add_argument("param", help="e.g. mha_cross")
    bisect.add_argument("good", help="a commit whose class has the old value")
    bisect.add_argument("bad", help="a commit whose class has the new value")
    bisect.set_defaults(run=_bisect)


def _read_classes(path: Path):  # noqa: ANN202 - a Classes; imported lazily
    from vkbench.commits.classes import Classes

    try:
        return Classes.read(path)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _changes(args: argparse.Namespace) -> int:
    from vkbench.results.asv_files import read_dir
    from vkbench.results.changes import changes

    found = read_dir(args.results)
    for problem in found.problems:
        print(f"vkbench changes: skipped {problem}", file=sys.stderr)
    if not found.files:
        raise UsageError(f"{args.results} holds no readable asv result files")
    classes = _read_classes(args.classes) if args.classes.is_file() else None
    table = changes(found, classes)
    if args.json:
        print(json.dumps(table.to_json(), indent=1))
        return 0
    render = tables.markdown if args.markdown else tables.render
    columns = ["kind", "benchmark", "param", "before -> after", "commit", "subject", "reason"]
    for title, shown in ((f"{len(table.upstream)} upstream changes (both sides recorded by one suite):",
                          table.upstream),
                         (f"{len(table.older)} steps recorded by an older suite (before the suite digest; "
                          "re-record both sides to confirm):", table.older)):
        print(title)
        rows = [["regression" if c.regression else "improvement", c.benchmark.split(".", 1)[1], c.param,
                 f"{c.before} -> {c.after}", c.commit[:8] + ("" if c.exact else f" (since {c.previous[:8]})"),
                 (f"#{c.pr} " if c.pr else "") + c.subject[:60], c.reason_after or c.reason_before]
                for c in shown]
        if rows:
            print(render(columns, rows))
    counts = table.left_out_counts()
    print(f"{sum(counts.values())} steps left out, across a change of vkbench's suite: "
          + ", ".join(f"{n} {why}" for why, n in counts.items()) + " (--json lists them)")
    answered = sum(1 for c in table.commits if c["measured_as"])
    print(f"{answered} of {len(table.commits)} commits answered by a recorded commit of their class")
    return 0


def _inputs(args: argparse.Namespace) -> int:
    from vkbench.commits.fingerprint import measure_inputs

    found = measure_inputs(args.workloads, lambda name: print(f"  lowering {name}", file=sys.stderr))
    path = found.write(args.out or inputs_path(args.workloads))
    print(f"{len(found.files)} files, {len(found.dirs)} directories read; written to {path}")
    return 0


def _suite_inputs(args: argparse.Namespace) -> int:
    from vkbench.results.asv_files import read_dir
    from vkbench.suite import identity, measure

    out = args.out or identity.PATH
    try:
        found = measure.measure(args.modules or None,
                                lambda name: print(f"  measuring {name}", file=sys.stderr, flush=True))
        if args.modules and out.is_file():  # the other modules keep their stored lists
            found = identity.SuiteInputs({**identity.SuiteInputs.read(out).modules, **found.modules},
                                         found.measured_with)
    except (ValueError, RuntimeError) as error:
        raise UsageError(str(error)) from None
    reads: dict[str, set[str]] = {}
    for root in args.results or [RESULTS_ROOT / "upstream", RESULTS_ROOT / "releases"]:
        for record in read_dir(root).files if root.is_dir() else []:
            for module, files in record.sidecar.suite_reads.items():
                reads.setdefault(module, set()).update(files)
    found, added = found.widen(reads, identity.tree_files(identity.roots()))
    for module, files in added.items():
        print(f"{module}: recordings read {len(files)} files outside its list (e.g. {files[0]}); widened it",
              file=sys.stderr)
    path = found.write(out)
    rows = [[name, len(m.files), f"{m.seconds:.1f}", identity.digest(m.files, m.dirs), m.ran]
            for name, m in sorted(found.modules.items())]
    print(tables.render(["module", "files", "seconds", "digest", "ran"], rows))
    print(f"written to {path}")
    return 0


def _classes(args: argparse.Namespace) -> int:
    from vkbench.build.base_release import base_chooser
    from vkbench.commits.classes import classify
    from vkbench.commits.fingerprint import Inputs, widen
    from vkbench.results.asv_files import read_dir
    from vkbench.runs.upstream import git_dir

    try:
        source = args.inputs or inputs_path(args.workloads)
        read = [(record.commit, record.sidecar.inputs) for record in read_dir(args.results).files]
        inputs, added = widen(Inputs.read(source), read)
        if added:
            inputs.write(source)
            for commit, files in added.items():
                print(f"{commit[:8]} read {len(files)} files outside the set (e.g. {files[0]}); "
                      "widened it", file=sys.stderr)
        found = classify(git_dir(args.mirror), args.range, inputs, base_chooser())
    except (ValueError, RuntimeError) as error:
        raise UsageError(str(error)) from None
    path = found.write(args.out or classes_path(args.workloads))
    if args.unmeasured:
        recorded = {f.commit for f in read_dir(args.results).files}
        todo = [c.first for c in found.classes if not recorded.intersection(c.commits)]
        args.unmeasured.write_text("".join(f"{commit}\n" for commit in todo))
        print(f"{len(todo)} of {len(found.classes)} classes not measured yet: {args.unmeasured}",
              file=sys.stderr)
    if args.json:
        print(json.dumps(found.to_json(), indent=1))
        return 0
    rows = [[i, c.first[:8], len(c.commits), c.base, ", ".join(c.changed[:3]) + (" ..." if len(c.changed) > 3
                                                                                  else ""), c.subject[:60]]
            for i, c in enumerate(found.classes)]
    print((tables.markdown if args.markdown else tables.render)(
        ["class", "first", "commits", "base", "inputs changed", "subject"], rows))
    print(f"{sum(len(c.commits) for c in found.classes)} commits in {len(found.classes)} classes; "
          f"written to {path}")
    return 0


def _bisect(args: argparse.Namespace) -> int:
    from vkbench.runs.bisect import Probe, bisect, recorded_or_run
    from vkbench.runs.ledger import machine_name

    classes = _read_classes(args.classes)
    good, bad = classes.class_of(args.good), classes.class_of(args.bad)
    if good is None or bad is None:
        raise UsageError(f"{args.good if good is None else args.bad} is not in {args.classes}")
    results = RESULTS_ROOT / "upstream"
    measure = recorded_or_run(args.mirror, args.machine or machine_name(), results,
                              Probe(args.benchmark, args.param))
    try:
        found, steps = bisect(classes, classes.classes.index(good), classes.classes.index(bad), measure,
                              lambda line: print(line, file=sys.stderr, flush=True))
    except ValueError as error:
        raise UsageError(str(error)) from None
    print(f"first class with the new value: {found.first[:8]} {found.subject}")
    print(f"inputs it changed: {', '.join(found.changed) or '-'}")
    print(f"measured: {', '.join(f'{c[:8]}={v}' for c, v in steps)}")
    return 0
