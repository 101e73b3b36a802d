"""Peak resident memory of this process during a block of work.

``ru_maxrss`` is a lifetime high-water mark, useless for the second of two
lowerings in one process, so a thread samples RSS while the block runs.
One asv ``setup_cache`` lowers several workloads in one process, and freed
memory stays mapped by malloc, so the block starts by collecting garbage and
handing free heap pages back (``malloc_trim``); ``added_mb`` (peak minus that
baseline) is then what this block needed, whatever ran before it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import threading
import time
from types import TracebackType

import psutil


def _trim_heap() -> None:
    """Collect garbage and return free malloc pages to the OS (glibc only; no-op elsewhere)."""
    gc.collect()
    name = ctypes.util.find_library("c")
    try:
        ctypes.CDLL(name).malloc_trim(0)
    except (OSError, AttributeError, TypeError):
        pass


class PeakRSS:
    """Context manager; ``peak_mb`` holds the highest RSS seen (MiB), ``baseline_mb`` the start."""

    def __init__(self, interval_s: float = 0.02) -> None:
        self.interval_s = interval_s
        self.peak_mb = 0.0
        self.baseline_mb = 0.0
        self._process = psutil.Process()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _read(self) -> None:
        self.peak_mb = max(self.peak_mb, self._process.memory_info().rss / 2**20)

    def _sample(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._read()

    @property
    def added_mb(self) -> float:
        """Memory the block needed on top of what the process held when it started."""
        return max(0.0, self.peak_mb - self.baseline_mb)

    def __enter__(self) -> PeakRSS:
        _trim_heap()
        self._read()
        self.baseline_mb = self.peak_mb
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        self._read()
        time.sleep(0)
