"""Classes of a commit range: runs of first-parent commits whose lowering inputs are identical.

Measuring one commit per class, the first, puts every step of a count
exactly on the commit that caused it, with no bisection: a commit whose
fingerprint (:mod:`vkbench.commits.fingerprint`) equals its predecessor's
lowers the tier's workloads from byte-identical files on the same base
wheel and torch, so its counts are its class's. A class is a *run*: a
commit that returns to an earlier fingerprint after a different one starts
a new class (its first commit is where the revert landed).

The classes are stored as versioned JSON (``results/upstream/classes-<tier>.json``)
so the changes table, the site and the workflow answer every commit with the
commit it was measured as, without the mirror.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vkbench import git
from vkbench.commits.fingerprint import Fingerprint, Inputs, fingerprints, read_document, write_document

SCHEMA = 1


@dataclass
class CommitClass:
    """A run of commits with one fingerprint; ``first`` is the one to measure."""

    first: str
    digest: str
    base: str
    commits: list[str]  #: full hashes, oldest first (``first`` included)
    changed: list[str] = field(default_factory=list)  #: inputs that differ from the previous class
    subject: str = ""  #: the first commit's subject line
    #: The PR its message names (``(#12345)``, or ghstack's ``Pull Request resolved: …/12345``).
    pull_request: str = ""

    @property
    def pr(self) -> str | None:
        return self.pull_request or None


@dataclass
class Classes:
    """Every class of a range for one workload set."""

    tier: str
    range: str
    classes: list[CommitClass]
    inputs_measured_with: str = ""

    def measured_as(self) -> dict[str, str]:
        """Every commit of the range -> the first commit of its class."""
        return {commit: c.first for c in self.classes for commit in c.commits}

    def class_of(self, commit: str) -> CommitClass | None:
        for c in self.classes:
            if any(m.startswith(commit) or commit.startswith(m) for m in c.commits):
                return c
        return None

    def to_json(self) -> dict[str, Any]:
        return {"vkbench_classes": SCHEMA, "tier": self.tier, "range": self.range,
                "inputs_measured_with": self.inputs_measured_with,
                "classes": [asdict(c) for c in self.classes]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Classes:
        if data.get("vkbench_classes") != SCHEMA:
            raise ValueError(f"not a vkbench classes file (vkbench_classes != {SCHEMA})")
        return cls(str(data["tier"]), str(data["range"]), [CommitClass(**c) for c in data["classes"]],
                   str(data.get("inputs_measured_with") or ""))

    @classmethod
    def read(cls, path: Path) -> Classes:
        return read_document(path, cls.from_json)

    def write(self, path: Path) -> Path:
        return write_document(path, self.to_json())


def stored(results_root: Path, workloads: str = "gate") -> Classes | None:
    """The classes committed under ``results_root/history/`` (None before any were computed)."""
    path = Path(results_root) / "history" / f"classes-{workloads}.json"
    return Classes.read(path) if path.is_file() else None


def first_parent(git_dir: Path, revision_range: str) -> list[str]:
    """Full hashes of ``revision_range``'s first-parent commits, oldest first."""
    return git.text(["rev-list", "--first-parent", "--reverse", revision_range], git_dir=git_dir).split()


_PR = (re.compile(r"\(#(\d+)\)\s*$"), re.compile(r"Pull Request resolved: \S*/pull/(\d+)"))


def messages(git_dir: Path, commits: Sequence[str]) -> dict[str, tuple[str, str]]:
    """``commit -> (subject, PR number or "")``: GitHub's squash merges end the subject with
    ``(#N)``; ghstack's land as ``Pull Request resolved: .../pull/N`` in the body."""
    if not commits:
        return {}
    log = git.text(["log", "--no-walk=unsorted", "--format=%H%n%B%x00", "--stdin"], git_dir=git_dir,
                   input="\n".join(commits))
    out = {}
    for block in log.split("\0"):
        lines = block.strip("\n").splitlines()
        if len(lines) < 2:
            continue
        commit, subject, text = lines[0], lines[1], "\n".join(lines[1:])
        found = _PR[0].search(subject) or _PR[1].search(text)
        out[commit] = (subject, found.group(1) if found else "")
    return out


def group(prints: Sequence[Fingerprint]) -> list[CommitClass]:
    """Runs of equal fingerprint digest, in commit order."""
    classes: list[CommitClass] = []
    previous: Fingerprint | None = None
    for fp in prints:
        if previous is not None and fp.digest == classes[-1].digest:
            classes[-1].commits.append(fp.commit)
        else:
            changed = fp.changed(previous) if previous is not None else []
            classes.append(CommitClass(fp.commit, fp.digest, fp.base, [fp.commit], changed))
        previous = fp
    return classes


def classify(git_dir: Path, revision_range: str, inputs: Inputs,
             base_for: Callable[[str | None], str],
             fingerprint: Callable[..., list[Fingerprint]] | None = None) -> Classes:
    """The classes of ``revision_range`` for ``inputs``.

    ``fingerprint(git_dir, commits, inputs, base_for)`` makes each commit's fingerprint: the
    lowering's (:func:`.fingerprint.fingerprints`) unless another tier passes its own (the runtime's
    reads its inputs' blobs the same way, plus submodules and directories).
    """
    commits = first_parent(git_dir, revision_range)
    classes = group((fingerprint or fingerprints)(git_dir, commits, inputs, base_for))
    found = messages(git_dir, [c.first for c in classes])
    for c in classes:
        c.subject, c.pull_request = found.get(c.first, ("", ""))
    return Classes(inputs.tier, revision_range, classes, inputs.measured_with)
