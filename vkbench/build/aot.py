"""``aot`` build mode: a commit's Python on a release wheel's native parts, in seconds.

Everything the Vulkan partitioner and ``exir`` do ahead of time is Python, so
to measure a commit we need its Python sources, not a native rebuild. This
module runs the steps, each owned by a module of its own:

* the *base*: the release nearest to the commit's ``version.txt`` among those
  the package index really has for this interpreter
  (:mod:`~vkbench.build.base_release` over :mod:`~vkbench.build.index`, whose
  answer is cached in ``--wheelhouse`` next to the wheels);
* its wheel, downloaded once, unpacked once and staged by hard links
  (:mod:`~vkbench.build.wheels`);
* the overlay (:mod:`~vkbench.build.overlay`): every ``.py``/``.pyi``/``.yaml``/``.fbs``
  file the checkout maps into the ``executorch`` package replaces the base's
  copy, modules the checkout deleted stay deleted, native parts and generated
  Python stay the base's;
* ``executorch/version.py`` says ``<version.txt>+aot.<base>`` and the commit's
  hash, so every record names the commit it measured;
* the smoke import (:mod:`~vkbench.build.smoke`) of ``--smoke`` modules with
  the base interpreter (:mod:`~vkbench.build.interpreters`): a commit whose
  Python needs native pieces the base lacks fails with one line naming the
  reason (:class:`AotError`); asv records the commit as failed and goes on;
* the new wheel, written into ``--out``.

``vkbench build aot install`` is the asv ``install_command`` half:
``pip install --no-deps`` the wheel into asv's env and link the base
environment's site-packages (torch, lerobot, vkbench, ...) into it with a
``.pth`` file (:mod:`~vkbench.build.envlink`), so no multi-GB dependency is
ever installed into an asv env.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vkbench import git, settings
from vkbench.build import wheels
from vkbench.build.base_release import base_chooser, checkout_version, nearest_release
from vkbench.build.envlink import link
from vkbench.build.index import available_releases
from vkbench.build.interpreters import base_python
from vkbench.build.messages import AotError, log
from vkbench.build.overlay import overlay, source_tree_from_installed
from vkbench.build.smoke import smoke

#: What callers of the mode use: ``vkbench build aot`` and asv's hooks (build, install, link and
#: their one-line failures), the commit classes (the base a build would pick), offline fixtures.
__all__ = ["AotError", "base_chooser", "build", "install", "link", "log", "source_tree_from_installed"]


def build(checkout: Path, out: Path, *, commit: str | None = None, base: str | None = None,
          wheelhouse: Path | None = None, smoke_modules: str | None = None, scratch: str | None = None,
          base_python_path: str | None = None, conf_dir: str | None = None) -> Path:
    """Write the overlay wheel of ``checkout`` into ``out``; return its path.

    ``None`` means the setting's value (``$VKBENCH_AOT_BASE``, ``$VKBENCH_WHEELHOUSE``,
    ``$VKBENCH_AOT_SMOKE``), read here rather than when the command line is
    parsed, so a caller that sets a variable sees it; ``commit`` defaults to
    the checkout's HEAD. ``smoke_modules`` is comma-separated ('' skips the smoke test).
    """
    start = time.monotonic()
    base = settings.text("VKBENCH_AOT_BASE") if base is None else base
    wheelhouse = wheels.default_wheelhouse() if wheelhouse is None else wheelhouse
    if smoke_modules is None:
        smoke_modules = settings.text("VKBENCH_AOT_SMOKE", empty_is_a_value=True)
    checkout = checkout.resolve()
    version_txt = checkout_version(checkout)
    base_version = (base if base not in ("", "auto")
                    else nearest_release(version_txt, available_releases(wheelhouse)))
    commit = commit or git.text(["rev-parse", "HEAD"], cwd=checkout, check=False) or None
    short = (commit or "unknown")[:8]
    version = f"{(version_txt or base_version).split('+')[0]}+aot.{base_version.replace('.', '')}"
    if commit:
        version += f".g{short}"
    log(f"commit {short}: version.txt {version_txt}, base executorch {base_version}")
    base_tree = wheels.unpacked_base(wheels.base_wheel(base_version, wheelhouse))
    staging = Path(tempfile.mkdtemp(prefix="vkbench-aot-", dir=scratch or None))
    try:
        staged = staging / "stage"
        files = wheels.stage(base_tree, staged)
        counts = overlay(staged, files, checkout)
        wheels.set_version(staged, version, commit)
        log(f"overlay: {counts['replaced']} replaced, {counts['added']} added, "
            f"{counts['dropped']} dropped ({time.monotonic() - start:.1f}s)")
        if smoke_modules:
            python = base_python(base_python_path, conf_dir)
            smoke(staged, python, [m for m in smoke_modules.split(",") if m])
            log(f"smoke import ok with {python} ({time.monotonic() - start:.1f}s)")
        target = wheels.write_wheel(staged, out, version, wheels.wheel_tag(staged))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log(f"wrote {target} in {time.monotonic() - start:.1f}s")
    return target


def install(out: Path | None = None, wheel: Path | None = None, *, base_python_path: str | None = None,
            conf_dir: str | None = None) -> Path:
    """Install the built wheel (``wheel``, or the one in ``out``) into this (asv) env; link the base env."""
    wheels = sorted(out.glob("*.whl")) if out else []
    if wheel:
        wheels = [wheel]
    if len(wheels) != 1:
        raise AotError(f"expected one wheel in {out}, found {len(wheels)}")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--force-reinstall", "--no-compile", str(wheels[0])], check=True)
    return link(base_python_path, conf_dir)
