"""The base interpreter: the one whose site-packages hold torch, lerobot and vkbench.

asv envs hold nothing but ``executorch``; everything heavy comes from the base environment,
which the smoke import runs in and which :mod:`vkbench.build.envlink` links into each env.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from vkbench import settings
from vkbench.build.messages import AotError


def base_python(explicit: str | None = None, conf_dir: str | None = None) -> str:
    """The interpreter whose site-packages hold torch, lerobot and vkbench.

    ``--base-python`` > ``$VKBENCH_BASE_PYTHON`` > ``<conf_dir>/.venv/bin/python``
    > this interpreter if it can import torch.
    """
    candidates = [explicit, settings.text("VKBENCH_BASE_PYTHON")]
    if conf_dir:
        candidates.append(str(Path(conf_dir) / ".venv" / "bin" / "python"))
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return candidate
    try:
        import torch  # noqa: F401

        return sys.executable
    except ImportError:
        raise AotError("no base interpreter with torch: set VKBENCH_BASE_PYTHON") from None


def site_dirs(python: str) -> list[str]:
    """``python``'s purelib and platlib directories."""
    out = subprocess.run(
        [python, "-c", "import json, sysconfig; p = sysconfig.get_paths(); "
                       "print(json.dumps(sorted({p['purelib'], p['platlib']})))"],
        capture_output=True, text=True, check=True,
    ).stdout
    return json.loads(out)
