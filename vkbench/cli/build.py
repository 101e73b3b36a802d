"""``vkbench build aot | full | glslc | asv-build | asv-install | conf``: ExecuTorch into asv environments.

asv runs ``python -m vkbench build asv-build ...`` and ``... asv-install ...``
(``asv.conf.json``) in its bare virtualenv, so this module and everything the
``vkbench`` parser imports must not need torch or asv: the modes are
imported inside the handlers.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from vkbench.build.full import LIB_NAME
from vkbench.cli.common import Subparsers
from vkbench.paths import ROOT


def add_parser(sub: Subparsers) -> None:
    """Register ``build`` and its modes."""
    build = sub.add_parser("build",
                           help="build ExecuTorch: full (a Vulkan-enabled overlay), aot, glslc, conf",
                           description="Put one ExecuTorch commit into an asv environment (asv.conf.json "
                                       "runs asv-build and asv-install).")
    modes = build.add_subparsers(dest="mode", required=True)
    _add_aot(modes)
    _add_full(modes)

    glslc = modes.add_parser("glslc", help="a glslc that compiles the Vulkan backend's shaders; "
                                           "prints its path")
    glslc.add_argument("--cache", type=Path, default=None,
                       help="download/unpack dir (default: $VKBENCH_GLSLC_CACHE)")
    glslc.add_argument("--no-system", action="store_true", help="ignore a glslc on PATH")
    glslc.set_defaults(run=_glslc)

    for name, handler, what in (("asv-build", _asv_build, "build_command"),
                                ("asv-install", _asv_install, "install_command")):
        hook = modes.add_parser(name, help=f"asv's {what} (asv.conf.json): the mode from $VKBENCH_BUILD")
        hook.add_argument("--checkout", type=Path, required=name == "asv-build", help="{build_dir}")
        hook.add_argument("--out", type=Path, required=True, help="{build_cache_dir}")
        hook.add_argument("--commit", default=None, help="{commit}")
        hook.add_argument("--conf-dir", default=None, help="{conf_dir}")
        hook.set_defaults(run=handler)

    tree = modes.add_parser("tree", help="move a kept ExecuTorch source tree to a commit, writing only the "
                                         "files that differ (a kept full build then rebuilds only those)")
    tree.add_argument("commit", help="an ExecuTorch commit")
    tree.add_argument("--mirror", type=Path, required=True, help="git dir of a pytorch/executorch mirror")
    tree.add_argument("--tree", type=Path, required=True, help="the kept source tree (created if missing)")
    tree.add_argument("--mirrors", type=Path, default=None,
                      help="folder of submodule mirrors (owner+name/repo; default: the mirror's own folder's "
                           "parent)")
    tree.set_defaults(run=_tree)

    conf = modes.add_parser("conf", help="write an asv config for the full mode (both tracer settings)")
    conf.add_argument("--config", type=Path, default=ROOT / "asv.conf.json")
    conf.add_argument("--out", type=Path, default=ROOT / ".asv" / "full.conf.json")
    conf.add_argument("--tracer", default="ON,OFF", help="comma-separated ON/OFF")
    conf.set_defaults(run=_conf)


def _add_aot(modes: Subparsers) -> None:
    aot = modes.add_parser("aot", help="a commit's Python overlaid on a release wheel's native parts",
                           description="aot build mode: a commit's Python on a release wheel's native parts, "
                                       "in seconds.")
    commands = aot.add_subparsers(dest="command", required=True)
    b = commands.add_parser("build", help="overlay a checkout's Python on a base wheel")
    b.add_argument("checkout", type=Path)
    b.add_argument("--out", type=Path, required=True, help="directory for the wheel ({build_cache_dir})")
    b.add_argument("--commit", default=None, help="commit hash recorded in version.py (default: HEAD)")
    b.add_argument("--base", default=None,
                   help="base release version, or auto (nearest release the index has; $VKBENCH_AOT_BASE)")
    b.add_argument("--wheelhouse", type=Path, default=None,
                   help="where base wheels and the release list are cached ($VKBENCH_WHEELHOUSE, "
                        "default .asv/wheels)")
    b.add_argument("--smoke", default=None,
                   help="comma-separated modules to import from the result ('' to skip; $VKBENCH_AOT_SMOKE)")
    b.add_argument("--scratch", default=None, help="where to stage (default: $TMPDIR)")
    b.set_defaults(run=_aot_build)
    install = commands.add_parser("install", help="asv install_command: pip install + link")
    install.add_argument("--out", type=Path, default=None, help="directory holding the wheel")
    install.add_argument("--wheel", type=Path, default=None)
    install.set_defaults(run=_aot_install)
    link = commands.add_parser("link", help="only link the base env into this one")
    link.set_defaults(run=_aot_link)
    for parser in (b, install, link):
        parser.add_argument("--base-python", default=None)
        parser.add_argument("--conf-dir", default=None)


def _add_full(modes: Subparsers) -> None:
    full = modes.add_parser("full", help="the Vulkan backend compiled from a checkout, in a private venv",
                            description="Build an ExecuTorch runtime with the Vulkan backend.")
    full.add_argument("checkout", type=Path, help="ExecuTorch source checkout (with the Vulkan submodules)")
    full.add_argument("--out", type=Path, required=True,
                      help="venv to create (e.g. .venv-vulkan-on: git ignores it and build-<name>)")
    full.add_argument("--tracer", choices=("on", "off"), default="on", help="event tracer (default on)")
    full.add_argument("--build-dir", type=Path, default=None, help="default: <out>/../build-<out name>")
    full.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    full.add_argument("--nice", type=int, default=19, help="niceness of the compile (0: none)")
    full.add_argument("--glslc", default=None, help="glslc to use (default: vkbench.build.glslc)")
    full.add_argument("--glslc-cache", type=Path, default=None)
    full.add_argument("--flatc", default=None, help="flatc (default: the wheel's data/bin/flatc)")
    full.add_argument("--extra-site", type=Path, action="append", default=[],
                      help="site dir put ahead of this env's on the venv's path (e.g. one with torch 2.13)")
    full.add_argument("--prebuilt-lib", type=Path, default=None,
                      help=f"skip the compile: make the venv around this {LIB_NAME} "
                           "(built for the same wheel)")
    full.add_argument("--base-package", type=Path, default=None,
                      help="installed executorch package dir (>= 1.5 wheel) to overlay; default: the "
                           "importable one")
    full.add_argument("--no-ccache", action="store_true")
    full.add_argument("--heartbeat", type=float, default=30.0, help="max seconds without output")
    full.add_argument("--json", type=Path, default=None, help="write the build record here")
    full.set_defaults(run=_full)


def _aot_build(args: argparse.Namespace) -> int:
    from vkbench.build import aot

    try:
        aot.build(args.checkout, args.out, commit=args.commit, base=args.base, wheelhouse=args.wheelhouse,
                  smoke_modules=args.smoke, scratch=args.scratch, base_python_path=args.base_python,
                  conf_dir=args.conf_dir)
    except aot.AotError as error:
        aot.log(f"FAILED: {error}")
        return 1
    return 0


def _aot_install(args: argparse.Namespace) -> int:
    from vkbench.build import aot

    try:
        aot.install(args.out, args.wheel, base_python_path=args.base_python, conf_dir=args.conf_dir)
    except aot.AotError as error:
        aot.log(f"FAILED: {error}")
        return 1
    return 0


def _aot_link(args: argparse.Namespace) -> int:
    from vkbench.build import aot

    try:
        aot.link(args.base_python, args.conf_dir)
    except aot.AotError as error:
        aot.log(f"FAILED: {error}")
        return 1
    return 0


def _full(args: argparse.Namespace) -> int:
    from vkbench.build.full import FullBuild, build

    return build(FullBuild(
        checkout=args.checkout, out=args.out, tracer=args.tracer, build_dir=args.build_dir, jobs=args.jobs,
        nice=args.nice, glslc=args.glslc, glslc_cache=args.glslc_cache, flatc=args.flatc,
        extra_sites=tuple(args.extra_site), prebuilt_lib=args.prebuilt_lib, base_package=args.base_package,
        ccache=not args.no_ccache, heartbeat=args.heartbeat, record=args.json,
    ))


def _glslc(args: argparse.Namespace) -> int:
    from vkbench.build.glslc import ensure_glslc

    print(ensure_glslc(args.cache, allow_system=not args.no_system))
    return 0


def _asv_build(args: argparse.Namespace) -> int:
    from vkbench.build.hooks import asv_build

    return asv_build(args.checkout, args.out, args.commit, args.conf_dir)


def _asv_install(args: argparse.Namespace) -> int:
    from vkbench.build.hooks import asv_install

    return asv_install(args.out, args.conf_dir)


def _conf(args: argparse.Namespace) -> int:
    from vkbench.build.hooks import write_full_conf

    print(write_full_conf(args.out, args.config, args.tracer.split(",")))
    return 0


def _tree(args: argparse.Namespace) -> int:
    from vkbench import git
    from vkbench.build.source_tree import TreeError, move_tree
    from vkbench.cli.common import UsageError

    if not args.mirror.is_dir():
        raise UsageError(f"no mirror at {args.mirror}")
    try:
        commit = git.commit_of(args.commit, git_dir=args.mirror)
        done, lacking = move_tree(args.mirror, commit, args.tree.absolute(),
                                  args.mirrors or args.mirror.absolute().parent.parent)
    except (git.GitError, TreeError) as error:
        raise UsageError(str(error)) from None
    absent = f"; not in the submodule mirrors: {', '.join(lacking)}" if lacking else ""
    print(f"{args.tree} at {commit[:8]}: {len(done.added)} added, {len(done.modified)} modified, "
          f"{len(done.deleted)} deleted{absent}")
    return 0
