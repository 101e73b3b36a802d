"""Running git: one place that spells the command line and turns a failure into one line.

Several layers ask git something: the commit classes and fingerprints read a mirror, the ``aot``
build and a run's provenance read ``HEAD``, the release ledger writes its own repo and
``vkbench upstream`` reads the mirror and prunes asv's clone of it. They all go through
:func:`run` (or :func:`popen`, for a long-lived ``cat-file --batch-command``), so a failure reads
the same everywhere: :class:`GitError` names the command, where it ran, and the line of git's
stderr that says what went wrong (its last ``fatal:``/``error:`` line, else its last line).

A top module (below every package): it imports nothing from vkbench.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypedDict, Unpack

#: How much of a command line a failure repeats (``tag -d`` may name hundreds of tags).
_SHOWN = 100


class GitError(RuntimeError):
    """A git command that failed; the message is one line: the command, where, git's reason."""


class Options(TypedDict, total=False):
    """:func:`run`'s keyword arguments, for the functions that pass them on."""

    git_dir: Path | str | None
    cwd: Path | str | None
    input: bytes | str | None
    env: Mapping[str, str] | None
    check: bool


def command(args: Sequence[str], *, git_dir: Path | str | None = None,
            cwd: Path | str | None = None) -> list[str]:
    """``git [--git-dir=D | -C DIR] ARGS``: ``git_dir`` for a bare repo or mirror, ``cwd`` for a work tree."""
    where = [f"--git-dir={git_dir}"] if git_dir is not None else []
    if cwd is not None:
        where += ["-C", str(cwd)]
    return ["git", *where, *args]


def _failure(args: Sequence[str], where: Path | str | None, reason: str) -> GitError:
    shown = " ".join(args)
    if len(shown) > _SHOWN:
        shown = shown[:_SHOWN].rsplit(" ", 1)[0] + " ..."
    place = f" in {where}" if where is not None else ""
    return GitError(f"git {shown}{place} failed: {reason}")


def run(args: Sequence[str], *, git_dir: Path | str | None = None, cwd: Path | str | None = None,
        input: bytes | str | None = None, env: Mapping[str, str] | None = None,
        check: bool = True) -> bytes:
    """git's standard output, as bytes (raw diffs and ``cat-file`` contents are not text).

    ``env`` is the whole environment of the command (None: this process's). With ``check``
    a failure (a non-zero exit, or no git on PATH) raises :class:`GitError`; without it, it
    returns whatever git wrote, usually nothing, for questions whose answer may be "none".
    """
    data = input.encode() if isinstance(input, str) else input
    try:
        done = subprocess.run(command(args, git_dir=git_dir, cwd=cwd), input=data, capture_output=True,
                              env=None if env is None else dict(env), check=False)
    except OSError as error:  # git itself is missing
        if check:
            raise _failure(args, git_dir or cwd, str(error)) from None
        return b""
    if done.returncode and check:
        raise _failure(args, git_dir or cwd, _reason(done.stderr) or f"exit status {done.returncode}")
    return done.stdout


def _reason(stderr: bytes) -> str:
    """git's last ``fatal:``/``error:`` line, else its last line: hints (``Use '--' to separate
    paths...``) come after the line that says what went wrong."""
    lines = [line.strip() for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    return next((line for line in reversed(lines) if line.startswith(("fatal:", "error:"))),
                lines[-1] if lines else "")


def text(args: Sequence[str], **options: Unpack[Options]) -> str:
    """:func:`run`'s output decoded and stripped: hashes, names, messages."""
    return run(args, **options).decode(errors="replace").strip()


def popen(args: Sequence[str], *, git_dir: Path | str | None = None,
          cwd: Path | str | None = None) -> subprocess.Popen[bytes]:
    """A git process to talk to over stdin and stdout (stderr discarded): ``cat-file --batch-command``."""
    return subprocess.Popen(command(args, git_dir=git_dir, cwd=cwd), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def commit_of(revision: str, *, git_dir: Path | str) -> str:
    """The full hash of the commit ``revision`` names in ``git_dir`` (:class:`GitError` when none)."""
    return text(["rev-parse", "--verify", f"{revision}^{{commit}}"], git_dir=git_dir)
