"""A probe's record across the recorded commits, in history order, and where a failure starts and stops.

A bug row's ``first_bad``/``fixed_in`` come from its probe's per-commit record (``results/upstream``
and the release results). asv's commit dates are not the order of ExecuTorch's main line, so main
commits go in the order of their classes (``results/history/classes-gate.json``) and release
results by date among them; one upstream commit counts once however many result files hold it.
"""

from __future__ import annotations

from dataclasses import dataclass

from vkbench.results.records import Recorded
from vkbench.suite import catalogue


@dataclass(frozen=True)
class HistoryPoint:
    """One recorded commit of one probe: whether its lowering failed and what it left on the CPU."""

    label: str
    failed: bool
    cpu_ops: float | None
    #: On ExecuTorch's main line (a commit of the classes, or the range's base), not a release's.
    main: bool = False


def _release_labels(recorded: Recorded) -> dict[str, str]:
    """Ledger commit -> ``<upstream commit> (v<version>)``: release results are filed under ledger commits."""
    return {r.commit: f"{(r.git_version or '')[:8]} (v{r.short_version})".lstrip()
            for r in recorded.ledger if r.commit}


def probe_history(probe: str, recorded: Recorded) -> list[HistoryPoint]:
    """The probe's record on every commit that holds it, oldest first (upstream and release results)."""
    releases = _release_labels(recorded)
    classes = recorded.classes
    position = {c: i for i, k in enumerate(classes.classes) for c in k.commits} if classes else {}
    base = classes.range.split("..")[0] if classes else ""
    dated: dict[str, tuple[int, int, HistoryPoint]] = {}
    for found in (recorded.upstream, recorded.releases):
        for record in found.files:
            failed = record.values(catalogue.PROBE_FAILED.name).get((probe,))
            if failed is None:
                continue
            tag = record.sidecar.provenance.release
            short = record.commit[:8]
            label = releases.get(record.commit) or (f"{short} ({tag})" if tag else short)
            cpu = record.values(catalogue.PROBE_CPU_OPS.name).get((probe,))
            key = label.split(" ")[0]  # one upstream commit, however many result files hold it
            if key not in dated or record.date < dated[key][0]:
                on_main = record.commit in position or bool(base) and record.commit.startswith(base)
                point = HistoryPoint(label, bool(failed), cpu, on_main and record.commit not in releases)
                dated[key] = (record.date, position.get(record.commit, -1), point)
    # along the main line, a commit is no older than any commit of an earlier class
    main = sorted((item for item in dated.values() if item[1] >= 0), key=lambda item: item[1])
    latest = 0
    order: list[tuple[int, int, HistoryPoint]] = []
    for date, index, point in main:
        latest = max(latest, date)
        order.append((latest, index, point))
    order += [item for item in dated.values() if item[1] < 0]
    return [point for _, _, point in sorted(order, key=lambda item: (item[0], item[1]))]


def is_bad(point: HistoryPoint, how: str) -> bool:
    """Does the point show the failure, read as a row's ``history`` says (``fails`` or ``whole``)?"""
    return point.failed if how == "fails" else (not point.failed and point.cpu_ops == 0)


_HOW = {"fails": "its lowering fails", "whole": "the probe lowers whole (the runtime gets the op)"}


def history_range(points: list[HistoryPoint], how: str) -> tuple[str, str, str, str]:
    """``(first_bad, fixed_in, last_good, summary)`` over the recorded commits.

    ``how`` is a row's ``history``: ``fails`` (bad where the lowering fails) or ``whole`` (bad where
    the probe lowers with no CPU op left). ``first_bad`` is the first commit of the last bad run that
    follows a good commit, ``last_good`` the good commit before it, ``fixed_in`` the first good commit
    after the last bad one. A run that starts at the oldest recorded commit has no ``first_bad`` (it
    began before the range), one that lasts to the newest no ``fixed_in``.
    """
    if how == "whole":  # a commit that recorded only the failure flag says nothing about the CPU ops
        points = [p for p in points if p.failed or p.cpu_ops is not None]
    if not points:
        return "", "", "", "no recorded commit holds the probe yet"
    bad = [is_bad(p, how) for p in points]
    where = f"{sum(bad)} of {len(points)} recorded commits"
    if not any(bad):
        return "", "", "", f"never bad on the {len(points)} recorded commits ({_HOW[how]}: never)"
    last = max(i for i, b in enumerate(bad) if b)
    start = last
    while start > 0 and bad[start - 1]:
        start -= 1
    first_bad = points[start].label if start > 0 else ""
    last_good = points[start - 1].label if start > 0 else ""
    fixed_in = points[last + 1].label if last + 1 < len(points) else ""
    return first_bad, fixed_in, last_good, f"{_HOW[how]} on {where}"
