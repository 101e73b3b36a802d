"""One line that says why something failed, including what a child process printed.

ExecuTorch runs tools such as ``flatc`` with ``subprocess.run(..., check=True)``
and lets their stderr go to the terminal, so the exception a lowering raises
says only ``returned non-zero exit status 1``. A row in the coverage table
(and asv's skip message) must carry the tool's own first error line instead,
so :func:`child_stderr_captured` captures a child's stderr while a lowering
runs (echoing it, so logs are unchanged) and attaches it to the
``CalledProcessError``; :func:`first_error_line` reads it back.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

_ERROR_WORDS = ("error", "fatal", "failed", "cannot", "not found", "no such")


def _text(data: Any) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data if isinstance(data, str) else ""


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def first_error_line(error: BaseException) -> str:
    """The exception's first line; for a failed child process, plus the child's first error line."""
    first = (_lines(str(error)) or [""])[0]
    if isinstance(error, subprocess.CalledProcessError):
        printed = _lines(_text(error.stderr)) or _lines(_text(error.output))
        if printed:
            worded = [i for i, line in enumerate(printed) if any(w in line.lower() for w in _ERROR_WORDS)]
            at = worded[0] if worded else 0
            line = printed[at]
            if line.endswith(":") and at + 1 < len(printed):  # flatc: "error:" then the message
                line = f"{line} {printed[at + 1]}"
            first = f"{first} {line}"
    return first


def typed_error_line(error: BaseException) -> str:
    """``Type: first line`` (:func:`first_error_line`), how outcomes and rows name a failure."""
    return f"{type(error).__name__}: {first_error_line(error)}"


@contextlib.contextmanager
def child_stderr_captured() -> Iterator[None]:
    """For a block: ``subprocess.run`` calls that leave stderr alone get it captured.

    The captured text is echoed to this process's stderr (what the caller
    would have seen) and attached to the ``CalledProcessError`` that
    ``check=True`` raises. Calls that choose their own stderr are untouched.
    """
    original = subprocess.run

    def run(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[Any]:
        if "stderr" in kwargs or kwargs.get("capture_output"):
            return original(*args, **kwargs)
        check = kwargs.pop("check", False)
        done = original(*args, stderr=subprocess.PIPE, **kwargs)
        if done.stderr:
            sys.stderr.write(_text(done.stderr))
        if check and done.returncode:
            raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
        return done

    subprocess.run = run  # type: ignore[assignment]
    try:
        yield
    finally:
        subprocess.run = original  # type: ignore[assignment]
