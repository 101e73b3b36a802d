"""The versioned JSON documents of ``results/history/``: one reader and one writer for all of them.

Each document (the lowering inputs, the classes of a range, the suite's inputs) names its own
schema key and number; a file that cannot be read or parsed is one ``ValueError`` naming the
file and the fault, so a command says which file to fix instead of printing a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def read_document[T](path: Path, parse: Callable[[dict[str, Any]], T]) -> T:
    """A versioned JSON document of ``results/history/``; ``ValueError`` names the file and the fault."""
    try:
        return parse(json.loads(Path(path).read_text()))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path}: {error}") from None


def write_document(path: Path, data: dict[str, Any]) -> Path:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data, indent=1) + "\n")
    return Path(path)
