"""An asv env linked to the base env: a ``.pth`` file for its site-packages, ``flatc`` on PATH.

No multi-GB dependency is ever installed into an asv env: the base environment's
site-packages (torch, lerobot, vkbench, ...) are added to it by a ``.pth`` file, after the
env's own, so the env's ``executorch`` shadows the base's. Older commits also need a ``flatc``
on PATH, which asv's env bin dir is first on.
"""

from __future__ import annotations

import os
import sysconfig
from collections.abc import Sequence
from pathlib import Path

from vkbench.build.interpreters import base_python, site_dirs
from vkbench.build.messages import log

#: Name of the .pth file that links the base environment into an asv env.
LINK_PTH = "vkbench_base_env.pth"


def link(base_python_path: str | None = None, conf_dir: str | None = None,
         extra_sites: list[str] | None = None) -> Path:
    """Write ``vkbench_base_env.pth`` into this interpreter's site-packages.

    The base env's site dirs go *after* this env's own (``site.addsitedir``
    appends), so the env's ``executorch`` shadows the base's while torch,
    lerobot, vkbench (and its editable install) come from the base.
    ``extra_sites`` go first (the ``full`` mode's private venv).
    """
    python = base_python(base_python_path, conf_dir)
    sites = list(extra_sites or []) + site_dirs(python)
    own = Path(sysconfig.get_paths()["purelib"])
    lines = [f"import site; site.addsitedir({s!r})" for s in sites if Path(s) != own]
    if conf_dir:
        lines.append(str(Path(conf_dir).resolve()))  # vkbench itself, if the base lacks it
    target = own / LINK_PTH
    target.write_text("\n".join(lines) + "\n")
    log(f"linked {python} site-packages into {own}")
    flatc = ensure_flatc(Path(sysconfig.get_paths()["scripts"]), [str(own), *sites])
    log(f"flatc for this env: {flatc}" if flatc else "no flatc found to put on this env's PATH")
    return target


def ensure_flatc(scripts: Path, sites: Sequence[str]) -> Path | None:
    """A ``flatc`` in the env's bin dir, which asv puts first on PATH for every benchmark.

    Commits of the 1.3 line and older serialize Vulkan (and program)
    flatbuffers with ``$FLATC_EXECUTABLE`` or ``flatc`` from PATH; newer ones
    find ``executorch/data/bin/flatc`` themselves. pip writes a ``flatc``
    console script when the wheel declares one; when it does not (or in
    ``full`` mode's venv), the first ``executorch/data/bin/flatc`` binary of
    ``sites`` (this env's, then the base env's) is symlinked in instead.
    """
    target = scripts / "flatc"
    if target.exists():
        return target
    for site in sites:
        candidate = Path(site) / "executorch" / "data" / "bin" / "flatc"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            if target.is_symlink():  # dangling: its env was removed
                target.unlink()
            scripts.mkdir(parents=True, exist_ok=True)
            target.symlink_to(candidate)
            return target
    return None
