"""One writer at a time per results folder: an advisory lock file beside the files it guards.

Several recordings of one machine run at once (two lanes, one per core; a VLA run beside them; a
runtime record): each asv process writes its own private folder (:mod:`vkbench.results.recording`),
and only the merge of a run's rows and sidecar entries into the shared folder writes there. That
merge, and every other read-modify-write of a result file or its sidecar (:mod:`vkbench.results.sidecar`,
the release ledger's renames), holds :func:`locked` on the folder of the file:
``fcntl.flock(LOCK_EX)`` on ``<folder>/.vkbench-lock`` (a machine's folder for its result files and
sidecars; the results folder itself for ``benchmarks.json`` and ``confirmations.json``). The lock is
released when the holder's file is closed, so a killed recording never leaves it held. The file is
empty and stays (``.gitignore`` names it); asv reads only ``*.json``.

The lock is re-entrant within a thread (a merge that calls :func:`vkbench.results.sidecar.merge` takes
it once); two threads, or two processes, exclude each other.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_NAME = ".vkbench-lock"

_held = threading.local()


def lock_path(folder: Path) -> Path:
    """The lock file guarding the files directly in ``folder``."""
    return Path(folder) / LOCK_NAME


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold the lock of ``folder`` (made if absent) for the block; waits while another writer holds it."""
    key = os.path.abspath(folder)
    held: set[str] = getattr(_held, "folders", None) or set()
    _held.folders = held
    if key in held:
        yield
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    descriptor = os.open(lock_path(folder), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file beside it and a rename, so a reader never
    sees half a file (the caller holds the folder's lock against other writers)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path
