"""``vkbench runtime ...``: the runtime layer from the command line.

``results`` (the default) tabulates the committed asv runtime results and
``ladder`` their policy ladder;
``run`` measures workloads with runners (the ladder: lowered, loads, runs,
matches); ``culprit`` narrows a runtime failure or a wrong output to the
delegated op types that cause it; ``limit`` searches the step limit; ``export`` saves bundles for a
machine that can only run the C++ runner; ``repro-export`` and ``repro-run`` do the same for the
runtime reproducers of ``repro/``; ``build-runner`` compiles that runner.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from vkbench import tables
from vkbench.cli.common import Subparsers, add_format_options, print_classes
from vkbench.paths import RESULTS_ROOT, ROOT
from vkbench.suite.catalogue import RUNNERS, RUNTIME_BACKENDS

#: The runtime build's inputs and the range's runtime classes (beside the lowering's, same forms).
RUNTIME_INPUTS = RESULTS_ROOT / "history" / "inputs-runtime.json"
RUNTIME_CLASSES = RESULTS_ROOT / "history" / "classes-runtime.json"


def add_parser(sub: Subparsers) -> None:
    """Add ``runtime`` and its subcommands to the ``vkbench`` parser."""
    runtime = sub.add_parser("runtime", help="the Vulkan runtime: results, run, limit, export, build-runner",
                             description=__doc__.splitlines()[0])
    add_format_options(runtime)
    runtime.set_defaults(run=_results)
    actions = runtime.add_subparsers(dest="action")

    results = actions.add_parser("results", help="step limits and latency of the committed asv results "
                                                 "(the default)")
    add_format_options(results)
    results.set_defaults(run=_results)

    ladder = actions.add_parser("ladder", help="how far each policy entry gets on Vulkan, per machine and "
                                               "runner (committed asv results)")
    add_format_options(ladder)
    ladder.set_defaults(run=_ladder)

    def workloads(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("workloads", nargs="+", metavar="WORKLOAD",
                            help="many/<n> (Many(n)), probe/<name> (an op probe) or a policy entry "
                                 "(act/model)")
        parser.add_argument("--backend", nargs="+", choices=RUNTIME_BACKENDS, default=list(RUNTIME_BACKENDS))

    run = actions.add_parser("run", help="lower, load, execute and compare with eager: one row per "
                                         "workload, backend and runner")
    workloads(run)
    run.add_argument("--runner", nargs="+", choices=RUNNERS, default=["python"])
    run.add_argument("--in-process", action="store_true", help="no child process per workload")
    run.add_argument("--out", type=Path, help="also write the outcomes' JSON there")
    add_format_options(run)
    run.set_defaults(run=_run)

    limit = actions.add_parser("limit", help="largest Many(n) that executes on Vulkan: gallop, then bisect")
    limit.add_argument("--runner", choices=RUNNERS, default="python")
    limit.add_argument("--cap", type=int, help="default: $VKBENCH_STEP_CAP")
    limit.add_argument("--start", type=int, help="default: $VKBENCH_STEP_START")
    limit.add_argument("--resolution", type=int, default=1, help="stop bisecting at this bracket width")
    limit.set_defaults(run=_limit)

    culprit = actions.add_parser("culprit", help="which delegated op types make a workload fail or "
                                                 "diverge on Vulkan: lower again with subsets, run each")
    culprit.add_argument("workload", help="many/<n>, probe/<name> or a policy entry")
    symptom = culprit.add_mutually_exclusive_group(required=True)
    symptom.add_argument("--fails", metavar="PATTERN",
                         help="a load/execute failure whose line matches this regular expression")
    symptom.add_argument("--diverges", action="store_true", help="output SNR against eager below --min-snr")
    culprit.add_argument("--min-snr", type=float, default=40.0, help="dB (default 40)")
    culprit.add_argument("--runner", choices=RUNNERS, default="python")
    culprit.add_argument("--out", type=Path, help="also write the answer's JSON there")
    culprit.add_argument("--json", action="store_true", help="one JSON document on stdout")
    culprit.set_defaults(run=_culprit)

    export = actions.add_parser("export", help="save bundles (programs, inputs, eager outputs) for the "
                                               "C++ runner elsewhere (VKBENCH_BUNDLES there)")
    export.add_argument("out", type=Path, help="bundle folder")
    workloads(export)
    export.set_defaults(run=_export)

    repro_export = actions.add_parser("repro-export", help="save a bundle per runtime reproducer "
                                                           "(repro/<id>) for the C++ runner elsewhere")
    repro_export.add_argument("out", type=Path, help="bundle folder")
    repro_export.set_defaults(run=_repro_export)

    repro_run = actions.add_parser("repro-run", help="run the runtime reproducers' saved bundles with "
                                                     "the C++ runner; write results/bugs/repro-runs-M.json")
    repro_run.add_argument("bundles", type=Path, help="the folder repro-export wrote")
    repro_run.add_argument("--machine", required=True, help="the device and build the record is for")
    repro_run.add_argument("--pte-runner", type=Path, help="default: $VKBENCH_PTE_RUNNER")
    repro_run.add_argument("--commit", help="the ExecuTorch commit (40 hex digits) whose Vulkan runtime the "
                                            "runner was built from: a runtime-history record, written to "
                                            "results/bugs/upstream")
    repro_run.add_argument("--out", type=Path, help="records folder (default: results/bugs, or "
                                                    "results/bugs/upstream with --commit)")
    repro_run.set_defaults(run=_repro_run)

    record = actions.add_parser("record", help="record an upstream commit's own Vulkan runtime with asv into "
                                               "results/upstream (its build full venv and C++ runner)")
    record.add_argument("commit", help="the ExecuTorch commit the venv and runner were built from")
    record.add_argument("--mirror", type=Path, required=True, help="git dir of a pytorch/executorch mirror")
    record.add_argument("--python", type=Path, required=True,
                        help="the commit's `vkbench build full` venv's python")
    record.add_argument("--runner", type=Path, required=True, help="folder holding the commit's pte_runner")
    record.add_argument("--machine", required=True, help="device and tracer setting "
                                                         "(lavapipe-x86_64-2core-tracer-off)")
    record.add_argument("--bench", default=None, help="asv -b pattern (default: ProbeLadder and StepLimit)")
    record.add_argument("--bundles", type=Path, default=None,
                        help="saved programs (default: $VKBENCH_BUNDLES)")
    record.add_argument("--base-wheel", default="1.5.1", help="the release whose core the build is over")
    record.add_argument("--results", type=Path, default=RESULTS_ROOT / "upstream")
    record.set_defaults(run=_record)

    inputs = actions.add_parser("inputs", help="the ExecuTorch files a Vulkan runtime build compiled or "
                                               "embedded, from its build folder (depfiles, shader list)")
    inputs.add_argument("cmake_dir", type=Path, help="the build's CMake folder (build-<venv>/cmake)")
    inputs.add_argument("--checkout", type=Path, required=True, help="the ExecuTorch tree it compiled")
    inputs.add_argument("--wheel", type=Path, help="the base executorch package it compiled against "
                                                   "(default: the imported one)")
    inputs.add_argument("--out", type=Path, help=f"default: {RUNTIME_INPUTS.relative_to(ROOT)}")
    inputs.set_defaults(run=_inputs)

    classes = actions.add_parser("classes", help="runtime classes of a commit range: runs of first-parent "
                                                 "commits whose runtime build inputs are identical")
    classes.add_argument("range", help="git revision range (dbcf6ac7..cff6f4dd)")
    classes.add_argument("--mirror", type=Path, required=True, help="git mirror of pytorch/executorch")
    classes.add_argument("--inputs", type=Path, help=f"default: {RUNTIME_INPUTS.relative_to(ROOT)}")
    classes.add_argument("--out", type=Path, help=f"default: {RUNTIME_CLASSES.relative_to(ROOT)}")
    add_format_options(classes)
    classes.set_defaults(run=classes_command)

    reasons = actions.add_parser("stamp-reasons", help="store the runtime's error lines of `runtime run "
                                                       "--out` outcomes for the ladder points they explain")
    reasons.add_argument("outcomes", type=Path, nargs="+", help="`vkbench runtime run --out` files")
    reasons.add_argument("--results", type=Path, required=True, help="asv results folder (results/releases)")
    reasons.add_argument("--machine", required=True, help="the machine the outcomes were measured on")
    reasons.set_defaults(run=_stamp_reasons)

    build = actions.add_parser("build-runner", help="compile pte_runner against an ExecuTorch install")
    build.add_argument("out", type=Path, help="folder for the runner and its libraries")
    build.add_argument("libs", nargs="+", metavar="LIB",
                       help="backend or kernel libraries to link (Vulkan's; the wheel's XNNPACK and "
                            "libexecutorch_kernels_optimized.so for programs with CPU ops)")
    build.add_argument("--executorch", type=Path, help="the installed executorch package (default: "
                                                       "the imported one)")
    build.set_defaults(run=_build_runner)


def _results(args: argparse.Namespace) -> int:
    print(runtime_tables(markdown=args.markdown, as_json=args.json))
    return 0


def runtime_tables(markdown: bool = False, as_json: bool = False) -> str:
    """What ``vkbench runtime`` prints: the committed asv runtime results, tabulated."""
    from vkbench.site.runtime_page import policy_rows, table_rows
    from vkbench.site.runtime_rows import machine_rows

    rows = machine_rows()
    if as_json:
        def policies(row: dict[str, Any]) -> list[dict[str, Any]]:
            return [{"runner": runner, "entry": entry, "backend": backend, **values}
                    for (runner, entry, backend), values in row["policies"].items()]

        return json.dumps([{**row, "policies": policies(row)} for row in rows], indent=2)
    labels, limit_rows, many_rows = table_rows(rows)
    draw = tables.draw(markdown)
    parts = [draw(["machine", "commit", "runner", "step limit", "cap"], limit_rows),
             draw(["machine", "n", *labels], many_rows)]
    recorded = policy_rows(rows)
    if recorded:
        parts.append("Policy forward latency (asv; — where a backend cannot run the entry):")
        headers = ["machine", "runner", "entry", "backend", "forward (median)", "max abs diff vs eager"]
        parts.append(draw(headers, recorded))
    return "\n\n".join(parts)


def _ladder(args: argparse.Namespace) -> int:
    return ladder(as_json=args.json, markdown=args.markdown)


def ladder(*, as_json: bool = False, markdown: bool = False) -> int:
    """Print the committed PolicyLadder results: the rung each entry reached, per machine and runner."""
    from vkbench.site.runtime_page import ladder_table
    from vkbench.site.runtime_rows import machine_rows

    headers, table = ladder_table(machine_rows())
    if as_json:
        print(json.dumps({"ladder": [dict(zip(headers, item, strict=True)) for item in table]}, indent=2))
    elif table:
        print(tables.draw(markdown)(headers, table))
    else:
        print("No PolicyLadder results recorded yet (record `bench_policy_runtime` on a Vulkan machine).")
    return 0


def _run(args: argparse.Namespace) -> int:
    return run(args.workloads, args.backend, args.runner, in_process=args.in_process, out=args.out,
               as_json=args.json, markdown=args.markdown)


def run(workloads: list[str], backends: list[str], runners: list[str], *, in_process: bool = False,
        out: Path | None = None, as_json: bool = False, markdown: bool = False) -> int:
    """Measure each workload on each backend and runner; progress on stderr, the ladder on stdout.

    Each workload runs in a child process unless ``in_process`` (an abort
    in a runtime must not take the other workloads down with it).
    """
    from vkbench.execution.measure import measure, measure_isolated
    from vkbench.execution.outcome import LADDER_HEADERS, ladder_rows

    outcomes = []
    for workload in workloads:
        print(f"  {workload} ...", file=sys.stderr, flush=True)
        if in_process:
            outcomes += measure(workload, backends, runners)
        else:
            outcomes += measure_isolated(workload, backends, runners)
        for row in ladder_rows(outcomes[-len(backends) * len(runners):]):
            print("    " + "  ".join(row[1:]), file=sys.stderr, flush=True)
    document = json.dumps({"outcomes": [o.to_json() for o in outcomes]}, indent=2)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(document + "\n")
    if as_json:
        print(document)
    else:
        print(tables.draw(markdown)(LADDER_HEADERS, ladder_rows(outcomes)))
    return 0


def _culprit(args: argparse.Namespace) -> int:
    """Print each trial on stderr and the op types found; exit 1 when the symptom did not show."""
    from vkbench.execution.culprit import Symptom, Trial, find

    symptom = Symptom("diverges", min_snr_db=args.min_snr) if args.diverges else Symptom("fails", args.fails)

    def progress(trial: Trial) -> None:
        seen = "shows it" if trial.shown else "clean"
        detail = f"{trial.stage}: {trial.error[:100]}" if trial.stage else f"SNR {trial.snr_db}"
        print(f"  {len(trial.delegated):3d} op types delegated -> {seen} ({detail}; {trial.seconds} s)",
              file=sys.stderr, flush=True)

    answer = find(args.workload, symptom, runner=args.runner, progress=progress)
    document = json.dumps(answer.to_json(), indent=2)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(document + "\n")
    if args.json:
        print(document)
    elif answer.culprit:
        print(f"{args.workload}: {', '.join(answer.culprit)} "
              f"({len(answer.trials)} lowerings, {answer.seconds} s)")
    else:
        print(f"{args.workload}: not reproduced with all {len(answer.op_types)} op types delegated")
    return 0 if answer.culprit else 1


def _limit(args: argparse.Namespace) -> int:
    from vkbench.execution.step_limit import find_step_limit, probe_with

    result = find_step_limit(probe_with(args.runner), args.cap, start=args.start, resolution=args.resolution,
                             log=lambda line: print(line, file=sys.stderr, flush=True))
    print(json.dumps(result.to_json(), indent=2))
    return 0


def _export(args: argparse.Namespace) -> int:
    return export(args.out, args.workloads, args.backend)


def export(out: Path, workloads: list[str], backends: list[str]) -> int:
    """Save a bundle per workload under ``out``; one line each: its folder and how each backend lowered."""
    from vkbench.execution.bundle import prepare

    for workload in workloads:
        bundle = prepare(workload, backends)
        folder = bundle.save(out)
        lowered = ", ".join(f"{b}: {'ok' if o.ok else o.stage}" for b, o in bundle.lowering.items())
        print(f"{folder}  {lowered}")
    return 0


def _build_runner(args: argparse.Namespace) -> int:
    from vkbench.execution.runners import build_runner

    print(build_runner(args.out, [str(lib) for lib in args.libs], args.executorch))
    return 0


def _repro_export(args: argparse.Namespace) -> int:
    from vkbench.execution import repros

    for folder in repros.export_bundles(args.out):
        print(folder)
    return 0


def _repro_run(args: argparse.Namespace) -> int:
    from vkbench import settings
    from vkbench.cli.common import UsageError
    from vkbench.execution import repros
    from vkbench.results import repro_runs

    runner = args.pte_runner or settings.path("VKBENCH_PTE_RUNNER")
    if runner is None or not Path(runner).is_file():
        raise UsageError("repro-run needs a built pte_runner (--pte-runner or VKBENCH_PTE_RUNNER)")
    if args.commit is not None and not re.fullmatch(r"[0-9a-f]{40}", args.commit):
        raise UsageError(f"--commit must be a full ExecuTorch commit (40 hex digits), got {args.commit!r}")
    if not args.bundles.is_dir():
        raise UsageError(f"no bundle folder {args.bundles}")
    record = repros.run_native(args.bundles, args.machine, Path(runner).absolute())
    if args.commit:
        record.build["commit"] = args.commit
    for name, run in record.runs.items():
        print(f"{name}: {'reproduced' if run.reproduced else 'NOT reproduced'} (rc {run.rc}, "
              f"{run.seconds}s): {run.line}")
    folder = args.out or (repro_runs.HISTORY if args.commit else repro_runs.RECORDS)
    print(f"written: {repro_runs.write(record, folder)}")
    return 0


def _record(args: argparse.Namespace) -> int:
    from vkbench import git, settings
    from vkbench.cli.common import UsageError
    from vkbench.runs.runtime_record import DEFAULT_PATTERN, record_runtime

    bundles = args.bundles or settings.path("VKBENCH_BUNDLES")
    runner = args.runner / "pte_runner"
    for what, path, ok in (("mirror", args.mirror, args.mirror.is_dir()),
                           ("python", args.python, args.python.is_file()),
                           ("pte_runner", runner, runner.is_file()),
                           ("bundles folder", bundles, bundles is not None and Path(bundles).is_dir())):
        if not ok:
            raise UsageError(f"no {what} at {path}")
    try:
        commit = git.commit_of(args.commit, git_dir=args.mirror)
    except git.GitError as error:
        raise UsageError(str(error)) from None
    from vkbench.results.recording import RecordingError

    try:
        found, code, seconds = record_runtime(commit, args.python, args.runner, args.machine,
                                              mirror=args.mirror, results=args.results,
                                              bundles=Path(bundles), base_wheel=args.base_wheel,
                                              pattern=args.bench or DEFAULT_PATTERN)
    except RecordingError as error:  # a shared file it cannot merge into: named, the run's files kept
        raise UsageError(str(error)) from None
    print(f"{commit[:8]} on {args.machine}: asv exit {code}, {seconds:.0f} s; "
          f"results: {found or 'none written'}")
    return 0 if code == 0 and found else 1


def _inputs(args: argparse.Namespace) -> int:
    from vkbench.commits.fingerprint import package_root
    from vkbench.commits.runtime_fingerprint import inputs_from_build

    wheel = args.wheel or package_root()
    measured = f"{args.checkout.resolve().name} over {wheel}"
    found, counts = inputs_from_build(args.cmake_dir, args.checkout, wheel, measured)
    path = found.write(args.out or RUNTIME_INPUTS)
    submodules = sum(f.startswith("submodule:") for f in found.files)
    print(f"{len(found.files) - submodules} files, {submodules} submodules, {len(found.dirs)} directories "
          f"(read: {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}); written to {path}")
    return 0


def classes_command(args: argparse.Namespace) -> int:
    """``vkbench runtime classes`` and ``vkbench history classes --tier runtime``."""
    from vkbench.build.base_release import base_chooser
    from vkbench.cli.common import UsageError
    from vkbench.commits.fingerprint import Inputs
    from vkbench.commits.runtime_fingerprint import runtime_classes
    from vkbench.runs.upstream_asv import git_dir

    try:
        inputs = Inputs.read(args.inputs or RUNTIME_INPUTS)
        found = runtime_classes(git_dir(args.mirror), args.range, inputs, base_chooser())
    except (ValueError, RuntimeError) as error:
        raise UsageError(str(error)) from None
    path = found.write(args.out or RUNTIME_CLASSES)
    print_classes(found, path, args, noun="runtime classes")
    return 0


def _stamp_reasons(args: argparse.Namespace) -> int:
    from vkbench.cli.common import UsageError
    from vkbench.results import sidecar
    from vkbench.results.asv_files import read_dir
    from vkbench.results.ladder import ladder_failures, logged_outcomes

    logged = {}
    for path in args.outcomes:
        logged.update(logged_outcomes(json.loads(path.read_text())["outcomes"]))
    for record in read_dir(args.results).files:
        failures = ladder_failures(record, logged) if record.machine == args.machine else []
        if failures:
            try:
                sidecar.merge(record.path, failures=failures)
            except sidecar.SidecarError as error:  # never written over: one line, exit 2
                raise UsageError(str(error)) from None
            print(f"{sidecar.path_for(record.path)}: {len(failures)} ladder points keep their reason")
    return 0
