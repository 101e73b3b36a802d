"""``vkbench changes | history {inputs,suite-inputs,classes,bisect}``: the recorded range, explained.

``history inputs`` finds what a workload set's lowering reads of ExecuTorch
(by running it), ``history suite-inputs`` what each benchmark module's records
read of vkbench itself (the files its benchmarks' asv version digests),
``history classes`` groups a range's first-parent commits
into runs of identical lowering inputs (``--tier runtime``: of identical runtime build
inputs, what ``vkbench runtime classes`` does), ``history bisect`` finds the class
where one benchmark's value steps, ``history confirm`` measures both sides of
every unconfirmed step again, ``history bases`` stores where the release tags
left main, and ``changes`` tells every step of the recorded counts as one event
per commit.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vkbench import tables
from vkbench.cli.common import Subparsers, UsageError, add_format_options, print_classes
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
                         help="classes of the range (default: results/history/classes-gate.json); the "
                              "runtime classes beside it (classes-runtime.json) order the runtime steps")
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

    classes = verbs.add_parser("classes", help="group a range's first-parent commits by lowering inputs "
                                               "(--tier runtime: by runtime build inputs)")
    classes.add_argument("--mirror", type=Path, required=True, help="git dir of a pytorch/executorch mirror")
    classes.add_argument("--tier", choices=("lowering", "runtime"), default="lowering",
                         help="whose inputs: the lowering's (default; --workloads picks the set) or a "
                              "Vulkan runtime build's (results/history/inputs-runtime.json; as `vkbench "
                              "runtime classes`)")
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

    confirm = verbs.add_parser("confirm", help="measure both sides of every unconfirmed step again (one asv "
                                               "run per pair of commits) and store whether it reproduced")
    confirm.add_argument("--mirror", type=Path,
                         help="git dir of a pytorch/executorch mirror (for the lowering's steps)")
    confirm.add_argument("--runners", type=Path, metavar="DIR",
                         help="C++ runners per commit (DIR/runner-<sha8>/pte_runner): confirm the runtime "
                              "steps, each side on its own runtime (VKBENCH_BUNDLES: the programs recorded)")
    confirm.add_argument("--machine", default=None,
                         help="the runtime machine the runners were built for (tracer on or off); needed "
                              "with --runners when steps of more than one runtime machine wait")
    confirm.add_argument("--results", type=Path, default=RESULTS_ROOT / "upstream",
                         help="recorded results (default: results/upstream); confirmations.json is kept "
                              "there")
    confirm.add_argument("--classes", type=Path, default=classes_path("gate"))
    confirm.add_argument("--limit", type=int, default=None, metavar="N", help="at most N pairs of commits")
    confirm.add_argument("--pair", action="append", default=[], metavar="PREVIOUS..COMMIT",
                         help="only this pair of commits (hash prefixes; repeatable): one lane per core, "
                              "each with its share of the pairs --dry-run lists")
    confirm.add_argument("--dry-run", action="store_true",
                         help="list the pairs and their asv runs; run nothing")
    confirm.add_argument("--counts-only", action="store_true",
                         help="only the count steps (exact; minutes a pair), not the timing ones "
                              "(interleaved rounds, 8-30 min a pair): what the daily workflow confirms")
    confirm.set_defaults(run=_confirm)

    work = verbs.add_parser("work", help="every step of the counted partitioner work along the main line "
                                         "(PartitionWork, any size), with the inputs its classes changed")
    work.add_argument("--results", type=Path, default=RESULTS_ROOT / "upstream")
    work.add_argument("--classes", type=Path, default=classes_path("gate"))
    work.add_argument("--suite", help="the bench_partition digest (default: the one most records carry)")
    add_format_options(work)
    work.set_defaults(run=_work)

    bases = verbs.add_parser("bases", help="store where each recorded release tag left main (git "
                                           "merge-base), so release steps are placed on main-line events")
    bases.add_argument("--mirror", type=Path, required=True)
    bases.add_argument("--results", type=Path, default=RESULTS_ROOT / "upstream")
    bases.add_argument("--out", type=Path, help="default: results/history/release-bases.json")
    bases.set_defaults(run=_bases)

    pins = verbs.add_parser("torch-pins", help="add to each recorded result's provenance the torch its "
                                               "commit pins (torch_pin.py, read from the mirror)")
    pins.add_argument("--mirror", type=Path, required=True)
    pins.add_argument("--results", type=Path, default=RESULTS_ROOT / "upstream")
    pins.set_defaults(run=_torch_pins)


def _read_classes(path: Path):  # noqa: ANN202 - a Classes; imported lazily
    from vkbench.commits.classes import Classes

    try:
        return Classes.read(path)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _runtime_classes_beside(classes_file: Path):  # noqa: ANN202 - a Classes or None; imported lazily
    """The runtime classes (``vkbench runtime classes``) stored beside ``classes_file``, if any."""
    runtime_file = classes_file.with_name(classes_path("runtime").name)
    return _read_classes(runtime_file) if runtime_file.is_file() else None


def explained(results: Path, classes_file: Path):  # noqa: ANN201 - a Changes; imported lazily
    """The events of ``results`` with their stored confirmations and release bases, and the runtime
    machines' rung steps ordered by the runtime classes stored beside ``classes_file``; unreadable result
    files are one line each on stderr; a corrupt confirmations, bases or classes file is a
    :class:`UsageError`."""
    from vkbench.results import confirmations
    from vkbench.results.asv_files import read_dir
    from vkbench.results.events import explain, read_bases

    found = read_dir(results)
    for problem in found.problems:
        print(f"vkbench changes: skipped {problem}", file=sys.stderr)
    if not found.files:
        raise UsageError(f"{results} holds no readable asv result files")
    classes = _read_classes(classes_file) if classes_file.is_file() else None
    runtime_classes = _runtime_classes_beside(classes_file)
    try:
        stored = confirmations.read(confirmations.path_for(results))
        bases = read_bases(classes_file.with_name("release-bases.json"))
    except ValueError as error:
        raise UsageError(str(error)) from None
    return found, explain(found, classes, stored, bases, runtime_classes)


def _where(change) -> str:  # noqa: ANN001 - a Change
    end = (change.recorded or change.commit)[:8]
    where = change.commit[:8] if change.exact else f"{change.previous[:8]}..{end}"
    return f"{where} on {change.machine}" if change.machine else where


def _confirmed(change) -> str:  # noqa: ANN001 - a Change
    if change.confirmed is None:
        return "older suite" if change.suite == "older" else "not yet"
    return "reproduced" if change.confirmed else "NOT reproduced"


def _changes(args: argparse.Namespace) -> int:
    _, table = explained(args.results, args.classes)
    if args.json:
        print(json.dumps(table.to_json(), indent=1))
        return 0
    render = tables.draw(args.markdown)
    counts = table.left_out_counts()
    regressing = sum(1 for e in table.events if e.regression)
    print(f"{len(table.events)} events ({regressing} regressing), {len(table.changes)} steps; "
          f"{len(table.dropped)} dropped (re-measured on both sides, did not reproduce); "
          f"{sum(counts.values())} left out (" + ", ".join(f"{n} {why}" for why, n in counts.items()) + ")\n")
    for event in table.events:
        kind = "REGRESSION" if event.regression else "improvement"
        subject = (f"#{event.pr} " if event.pr else "") + event.subject
        where = event.commit[:8] if event.exact else \
            f"{event.previous[:8]}..{event.commit[:8]} ({event.line})"
        print(f"{kind} {where} {subject}".rstrip())
        if event.files:
            print(f"  inputs changed: {', '.join(event.files)}")
        rows = [[c.benchmark.split(".", 1)[1], c.param, c.values("->"), _where(c), _confirmed(c)]
                for c in event.rows]
        print("  " + render(["benchmark", "param", "before -> after", "where", "confirmed"], rows)
              .replace("\n", "\n  "))
        for reason in event.reasons:
            print(f"  reason: {reason}")
        for note in event.notes:
            print(f"  {note}")
        if event.repeated_on:
            print(f"  also on the release line: {', '.join(event.repeated_on)}")
        print(f"  confirmation: {event.confirmation or '-'}")
        print(f"  reproduce: {event.repro}\n")
    for change in table.dropped:
        how = change.confirmation.how if change.confirmation else ""
        print(f"dropped: {change.benchmark.split('.', 1)[1]}({change.param}) {change.before} -> "
              f"{change.after} at {_where(change)}: {how}")
    print(f"{sum(counts.values())} steps left out: " + ", ".join(f"{n} {why}" for why, n in counts.items())
          + " (--json lists them)")
    answered = sum(1 for c in table.commits if c["measured_as"])
    print(f"{answered} of {len(table.commits)} commits answered by a recorded commit of their class")
    return 0


def _confirm(args: argparse.Namespace) -> int:
    from vkbench.results import confirmations
    from vkbench.runs import confirm
    from vkbench.runs.upstream_asv import DEFAULT_CONFIG, write_config

    if args.mirror is None and args.runners is None:
        raise UsageError("history confirm needs --mirror (the lowering's steps) or --runners (the runtime's)")
    found, table = explained(args.results, args.classes)
    try:
        stored = confirmations.read(confirmations.path_for(args.results))
    except ValueError as error:
        raise UsageError(str(error)) from None
    steps = confirmations.pending(table.steps_to_confirm(), stored)
    if args.counts_only:
        steps = [step for step in steps if not step.timing]
    try:
        pairs = confirmations.chosen(confirmations.pairs(steps), args.pair)
    except ValueError as error:
        raise UsageError(str(error)) from None
    steps = [step for pair in pairs for step in pair.steps]
    runtime = confirmations.pending(table.runtime_steps_to_confirm(), stored)
    if runtime:
        how = "" if args.runners else " (with --runners DIR: each side on its own runtime)"
        print(f"{len(runtime)} runtime steps to confirm{how}", file=sys.stderr)
    if args.runners is not None and not args.dry_run:
        from vkbench.runs.confirm_runtime import RunnerMissing, confirm_runtime, machines_of

        if not args.runners.is_dir():
            raise UsageError(f"no runners folder {args.runners}")
        waiting = machines_of(runtime)
        if args.machine is None and len(waiting) > 1:
            raise UsageError(f"runtime steps of {len(waiting)} machines wait ({', '.join(waiting)}): "
                             "--runners holds one machine's builds, name it with --machine")
        machine = args.machine if args.machine is not None else next(iter(waiting), "")
        try:
            done_runtime = confirm_runtime(args.results, runtime, args.runners,
                                           _runtime_classes_beside(args.classes), machine)
        except RunnerMissing as error:
            raise UsageError(str(error)) from None
        failed = sum(1 for c in done_runtime if not c.reproduced)
        print(f"{len(done_runtime)} runtime steps confirmed now: {len(done_runtime) - failed} reproduced, "
              f"{failed} did not")
    if args.mirror is None:
        if pairs:
            print(f"{len(steps)} lowering steps wait for --mirror (a git dir of pytorch/executorch)",
                  file=sys.stderr)
        return 0
    machines = {f.commit: f.machine for f in found.files}
    print(f"{len(steps)} steps to confirm in {len(pairs)} asv runs ({len(stored)} confirmations stored)",
          file=sys.stderr)
    shown = pairs[:args.limit] if args.limit is not None else pairs
    if args.dry_run:
        for pair in shown:
            command = confirm.asv_args(pair, DEFAULT_CONFIG, machines.get(pair.commit, "MACHINE"),
                                       Path("HASHES"))
            print(f"{pair.previous[:8]} -> {pair.commit[:8]}: {len(pair.steps)} steps"
                  f"{' (timing)' if pair.timing else ''}\n  " + " ".join(command[3:]))
        return 0
    from vkbench.results.confirmations import ConfirmationsError
    from vkbench.results.recording import RecordingError

    config = write_config(DEFAULT_CONFIG)
    done = []
    for machine in sorted({machines.get(p.commit, "") for p in shown}):
        these = [s for p in shown if machines.get(p.commit, "") == machine for s in p.steps]
        try:
            done += confirm.confirm(args.results, args.mirror, config, machine, these)
        except (RecordingError, ConfirmationsError) as error:  # a corrupt confirmations file, a run its
            # results folder cannot take (its own files kept): one line, exit 2
            raise UsageError(str(error)) from None
    failed = sum(1 for c in done if not c.reproduced)
    print(f"{len(done)} steps confirmed now: {len(done) - failed} reproduced, {failed} did not "
          f"(stored in {confirmations.path_for(args.results)})")
    return 0


def _phases(phases: dict[str, float]) -> str:
    return ", ".join(f"{phase} {delta:+,.0f}" for phase, delta in phases.items() if phase != "total")


def _work(args: argparse.Namespace) -> int:
    from vkbench.results.asv_files import read_dir
    from vkbench.results.work_history import work_history

    if not args.results.is_dir():
        raise UsageError(f"no results folder {args.results}")
    found = work_history(read_dir(args.results), _read_classes(args.classes), args.suite)
    if args.json:
        print(json.dumps(found.to_json(), indent=1))
        return 0
    rows = []
    for step in found.steps:
        deltas = "; ".join(f"{blocks}: {_phases(phases)} ({step.share(blocks):+.3%})"
                           for blocks, phases in step.deltas.items())
        classes = str(step.first_class) if step.first_class == step.last_class else \
            f"{step.first_class}-{step.last_class}"
        rows.append([step.commit[:8], classes, deltas + (" (noise)" if step.noise else ""),
                     ", ".join(step.changed) or "-"])
    headers = ["recorded", "classes", "events (blocks: phase)", "inputs changed"]
    print(tables.draw(args.markdown)(headers, rows))
    sizes = ", ".join(f"{blocks} blocks {values[0]:,.0f} -> {values[-1]:,.0f}"
                      for blocks, values in found.totals.items()
                      if values and values[0] is not None and values[-1] is not None)
    print(f"\n{len(found.steps)} steps over {len(found.commits)} main-line records of {found.suite}; "
          f"total work {sizes}")
    return 0


def _bases(args: argparse.Namespace) -> int:
    from vkbench.results.asv_files import read_dir
    from vkbench.results.events import BASES_PATH, release_bases
    from vkbench.runs.upstream_asv import UpstreamError, git_dir

    releases = {f.commit: f.sidecar.provenance.release for f in read_dir(args.results).files
                if f.sidecar.provenance.release}
    try:
        found = release_bases(git_dir(args.mirror), releases)
    except UpstreamError as error:
        raise UsageError(str(error)) from None
    path = found.write(args.out or BASES_PATH)
    for commit, known in sorted(found.bases.items(), key=lambda item: item[1]["tag"]):
        print(f"{known['tag']} {commit[:8]}: left main at {known['base'][:8]}")
    print(f"written to {path}")
    return 0


def _torch_pins(args: argparse.Namespace) -> int:
    from collections import Counter

    from vkbench.runs.upstream_asv import UpstreamError, git_dir, stamp_torch_pins

    if not args.results.is_dir():
        raise UsageError(f"{args.results}: no such results folder")
    try:
        stamped = stamp_torch_pins(args.results, git_dir(args.mirror))
    except UpstreamError as error:
        raise UsageError(str(error)) from None
    pins = Counter(pin or "no torch_pin.py" for _, pin in stamped)
    said = ", ".join(f"{n} x {pin}" for pin, n in sorted(pins.items()))
    print(f"{len(stamped)} result files without a torch pin read: {said}")
    return 0


def _inputs(args: argparse.Namespace) -> int:
    from vkbench.commits.fingerprint import measure_inputs

    found = measure_inputs(args.workloads, lambda name: print(f"  lowering {name}", file=sys.stderr))
    path = found.write(args.out or inputs_path(args.workloads))
    print(f"{len(found.files)} files, {len(found.dirs)} directories read; written to {path}")
    return 0


def _suite_inputs(args: argparse.Namespace) -> int:
    from vkbench.results.asv_files import read_dir
    from vkbench.suite import identity, suite_inputs

    out = args.out or identity.PATH
    try:
        found = suite_inputs.measure(args.modules or None,
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
    if args.tier == "runtime":
        from vkbench.cli.runtime import classes_command

        if args.unmeasured:
            raise UsageError("--unmeasured lists lowering classes; the runtime tier has no daily run yet")
        return classes_command(args)
    from vkbench.build.base_release import base_chooser
    from vkbench.commits.classes import classify
    from vkbench.commits.fingerprint import Inputs, widen
    from vkbench.results.asv_files import read_dir
    from vkbench.runs.upstream_asv import git_dir

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
    print_classes(found, path, args)
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
