"""Peak resident memory of this process during a block of work.

``ru_maxrss`` is a lifetime high-water mark, useless for the second of two
lowerings in one process, so a thread samples RSS while the block runs.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType

import psutil


class PeakRSS:
    """Context manager; ``peak_mb`` holds the highest RSS seen (MiB)."""

    def __init__(self, interval_s: float = 0.02) -> None:
        self.interval_s = interval_s
        self.peak_mb = 0.0
        self._process = psutil.Process()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _read(self) -> None:
        self.peak_mb = max(self.peak_mb, self._process.memory_info().rss / 2**20)

    def _sample(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._read()

    def __enter__(self) -> PeakRSS:
        self._read()
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
