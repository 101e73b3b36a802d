"""The smoke import: does the commit's Python import on the base wheel's native parts?

A commit's Python may need native pieces the base release lacks (a missing ``_C`` symbol, a
dtype unknown to the base's schema, ...). Importing the modules the suite needs from the
staged tree, with the base interpreter (the one that has torch), finds that before the wheel
is written, and the build fails with one line naming the reason instead of every benchmark
failing later.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

from vkbench.build.messages import AotError

#: Errors that mean "the commit's Python needs native code the base does not have".
_NATIVE_HINTS = re.compile(
    r"undefined symbol|\.so\b|_C\b|_portable_lib|pybindings|has no attribute|cannot import name|"
    r"KeyError: '[A-Z][A-Za-z0-9]*'|No module named 'executorch\.",
)

_SMOKE_SNIPPET = r"""
import importlib, json, sys, traceback, warnings
warnings.simplefilter("ignore")
stage = sys.argv[1]
sys.path.insert(0, stage)
for name in sys.argv[2:]:
    try:
        importlib.import_module(name)
    except BaseException as error:
        tb = traceback.extract_tb(error.__traceback__)
        where = next((f"{f.filename.replace(stage + '/', '')}:{f.lineno}" for f in reversed(tb)
                      if f.filename.startswith(stage)), "?")
        print(json.dumps({"module": name, "error": f"{type(error).__name__}: {error}".splitlines()[0],
                          "where": where}))
        sys.exit(1)
import executorch
print(json.dumps({"ok": True, "path": list(executorch.__path__)}))
"""


def smoke(stage: Path, python: str, modules: list[str]) -> None:
    """Import ``modules`` from the staged tree with the base interpreter."""
    if not modules:
        return
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run([python, "-c", _SMOKE_SNIPPET, str(stage), *modules],
                          capture_output=True, text=True, cwd=tempfile.gettempdir(), env=env,
                          timeout=600, check=False)
    line = (done.stdout.strip().splitlines() or ["{}"])[-1]
    try:
        result = json.loads(line)
    except json.JSONDecodeError:
        result = {"error": (done.stderr.strip().splitlines() or ["no output"])[-1], "module": "?",
                  "where": "?"}
    if done.returncode or "error" in result:
        error = result.get("error", "?")
        kind = ("needs native pieces the base wheel lacks" if _NATIVE_HINTS.search(error)
                else "does not import on the base wheel")
        raise AotError(f"{kind}: import {result.get('module')} -> {error} (at {result.get('where')})")
