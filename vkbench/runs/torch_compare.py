"""``vkbench suite torch-compare``: does the torch version change what vkbench measures?

Why this exists: vkbench lowers with torch 2.11.0, the newest torch LeRobot 0.6.1 allows (it declares
``torch<2.12``), while ExecuTorch pins torch 2.12.0 before upstream commit 294c328c and 2.13.0 after
(``TORCH_VERSION`` in its ``torch_pin.py``), and the executorch 1.5.1 wheel's compiled runtime is built for
2.13. Every recorded count is therefore made under a torch that ExecuTorch itself does not test with, and a
reader may fairly ask whether the counts would move under the pinned one. This module answers that by
measurement, not by argument: it runs vkbench's own lowering commands (``vkbench probe --json``: all probes;
``vkbench policies --json`` over the fast entries the gate and standard tiers record) under two
interpreters, A and B, each in a subprocess on this same checkout (``python -m vkbench`` with the checkout
first on ``PYTHONPATH``), and compares what they record, probe by probe and entry by entry.

Compared: every field of a probe's or entry's record (counts, CPU ops and nodes, the partitioner's reasons,
failure stage and text, ExecuTorch's ``get_delegation_info`` numbers) except time and memory. A difference
there is a *count* difference (exit 1). ``program_bytes`` is reported but does not fail: the serialized
program may grow or shrink with torch's own metadata while the graph the backend took is the same. Both
children run with one ``PYTHONHASHSEED`` (the order of a set of strings follows it), and in every text
each side's own install paths and object addresses are taken out and the items of a set's text sorted:
ExecuTorch words some reasons from sets of dtypes (``not in {torch.float32, torch.float16}``), and a
``torch.dtype`` hashes by its address, so that order moves from process to process on one stack (it did
for ``vqbet/rollout``'s ``aten.where.self`` reason in the first comparison run). What remains is what the
torch version changes.

:func:`make_overlay` makes interpreter B: a venv whose own site-packages hold only torch and torchvision of
the given versions (``pip install --no-deps``; plus, with ``--with``, a CUDA library the PyPI wheel pins newer
than the base's) and a ``.pth`` file that appends the base interpreter's site-packages, so every other
package (executorch, lerobot, ...) is the base one, same version.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vkbench import tables
from vkbench.paths import ROOT
from vkbench.suite.catalogue import FAST_ENTRIES

#: Fields never compared: wall time and memory move from run to run.
NOT_COMPARED = frozenset({"seconds", "work_seconds", "partition_phases", "peak_rss_mb", "added_rss_mb"})
#: Fields reported when they differ but that do not fail the comparison.
BYTES_FIELDS = frozenset({"program_bytes"})
#: One hash seed for both children: ExecuTorch words some reasons from sets of strings.
HASH_SEED = "0"
#: Tried first for the overlay's wheels (CPU builds, no CUDA libraries needed); PyPI otherwise.
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
#: The name of the overlay's link to the base interpreter's site-packages.
OVERLAY_PTH = "vkbench_torch_overlay_base.pth"
#: What a side's interpreter reports about itself (run with the checkout first on the path).
_ENVIRONMENT = (
    "import importlib.metadata as m, json, sys, torch, executorch, vkbench; "
    "print(json.dumps({'executable': sys.executable, 'prefix': sys.prefix, 'python': sys.version.split()[0], "
    "'torch': torch.__version__, 'torch_file': torch.__file__, 'executorch': m.version('executorch'), "
    "'vkbench': vkbench.__file__}))"
)
#: What the summary calls each kind of record.
PLURAL = {"probe": "probes", "entry": "entries"}
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_TEMP = re.compile(re.escape(tempfile.gettempdir()) + r"/tmp[\w-]+")
#: A set's text in a message (``{torch.float32, torch.float16}``): no colon or quote, so no dict or JSON.
_SET_TEXT = re.compile(r"\{([^{}:'\"]+,[^{}:'\"]+)\}")
_ABSENT = "(absent)"


class TorchCompareError(Exception):
    """An interpreter that is not there or cannot run vkbench, or a side that recorded nothing: one line."""


@dataclass(frozen=True)
class Difference:
    """One field of one probe or entry that differs between the sides (values after normalization)."""

    kind: str  #: ``probe`` or ``entry``
    name: str
    field: str
    a: Any
    b: Any

    @property
    def counts(self) -> bool:
        """A difference that fails the comparison (everything but program bytes)."""
        return self.field not in BYTES_FIELDS

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "field": self.field, "a": self.a, "b": self.b,
                "counts": self.counts}


@dataclass
class Comparison:
    """Two sides' records compared: per kind (probe, entry) how many are equal, and every difference."""

    environments: tuple[dict[str, Any], dict[str, Any]]
    #: kind -> (equal, compared); an item whose only difference is its program bytes is equal
    totals: dict[str, tuple[int, int]]
    differences: list[Difference] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if any(d.counts for d in self.differences) else 0

    def summary(self) -> str:
        """``probes 24/24 equal, entries 14/14 equal (program bytes differ: tdmpc/q +128)``."""
        parts = [f"{PLURAL[kind]} {equal}/{total} equal" for kind, (equal, total) in self.totals.items()]
        text = ", ".join(parts)
        grown = [f"{d.name} {_delta(d.a, d.b)}" for d in self.differences if not d.counts]
        if grown:
            text += f" (program bytes differ: {', '.join(grown)})"
        differing = sorted({f"{d.name}" for d in self.differences if d.counts})
        if differing:
            text += f"; counts differ in {', '.join(differing)}"
        return text

    def rows(self) -> list[list[str]]:
        return [[d.kind, d.name, d.field, _clip(d.a), _clip(d.b), "yes" if d.counts else "no (bytes)"]
                for d in self.differences]

    def headers(self) -> list[str]:
        a, b = (env.get("torch", "?") for env in self.environments)
        return ["kind", "name", "field", f"A (torch {a})", f"B (torch {b})", "fails"]

    def to_json(self) -> dict[str, Any]:
        return {
            "sides": list(self.environments),
            "totals": {kind: {"equal": equal, "compared": total}
                       for kind, (equal, total) in self.totals.items()},
            "differences": [d.to_json() for d in self.differences],
            "summary": self.summary(),
            "exit": self.exit_code,
        }


def _delta(a: Any, b: Any) -> str:
    if isinstance(a, int) and isinstance(b, int):
        return f"{b - a:+d}"
    return f"{a} -> {b}"


def _clip(value: Any, width: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[: width - 3] + "..."


# ------------------------------------------------------------------ comparing (pure)
def _sorted_set(match: re.Match[str]) -> str:
    return "{" + ", ".join(sorted(item.strip() for item in match[1].split(","))) + "}"


def _normalized(value: Any, prefixes: Sequence[str]) -> Any:
    """``value`` with a side's own install paths, temporary folders (``mkdtemp``'s random names), object
    addresses and set orders taken out of its texts."""
    if isinstance(value, str):
        for prefix in prefixes:
            value = value.replace(prefix, "<env>")
        value = _TEMP.sub("<tmp>", _ADDRESS.sub("0x?", value))
        return _SET_TEXT.sub(_sorted_set, value)
    if isinstance(value, dict):
        return {_normalized(k, prefixes): _normalized(v, prefixes) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalized(v, prefixes) for v in value]
    return value


def _prefixes(environment: dict[str, Any]) -> list[str]:
    """A side's own paths, longest first: its torch package's site dir and its prefix."""
    found = []
    if environment.get("torch_file"):
        found.append(str(Path(environment["torch_file"]).parent.parent))
    if environment.get("prefix"):
        found.append(str(environment["prefix"]))
    return sorted({p for p in found if len(p) > 1}, key=len, reverse=True)


def flatten(record: dict[str, Any]) -> dict[str, Any]:
    """One record's compared fields: a policy row's ``coverage`` fields lifted beside its own."""
    flat = {k: v for k, v in record.items() if k != "coverage"}
    flat.update(record.get("coverage") or {})
    return {k: v for k, v in flat.items() if k not in NOT_COMPARED}


def compare_records(kind: str, a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]],
                    prefixes: tuple[Sequence[str], Sequence[str]] = ((), ()),
                    ) -> tuple[int, int, list[Difference]]:
    """Records by name on both sides: (equal, compared, differences). A name on one side only differs."""
    names = list(dict.fromkeys([*a, *b]))
    differences: list[Difference] = []
    equal = 0
    for name in names:
        if name not in a or name not in b:
            differences.append(Difference(kind, name, "present", name in a, name in b))
            continue
        left = _normalized(flatten(a[name]), prefixes[0])
        right = _normalized(flatten(b[name]), prefixes[1])
        keys = dict.fromkeys([*left, *right])
        pairs = {key: (left.get(key, _ABSENT), right.get(key, _ABSENT)) for key in keys}
        found = [Difference(kind, name, key, x, y) for key, (x, y) in pairs.items() if x != y]
        differences += found
        equal += not any(d.counts for d in found)
    return equal, len(names), differences


def compare(side_a: dict[str, Any], side_b: dict[str, Any]) -> Comparison:
    """Two side documents (:func:`measure_side`'s) compared probe by probe and entry by entry."""
    environments = ({**side_a.get("environment", {}), "seconds": side_a.get("seconds", {})},
                    {**side_b.get("environment", {}), "seconds": side_b.get("seconds", {})})
    # Both sides' paths leave both sides' texts: an overlay's executorch (and its flatc) is its base's, so a
    # message names the other side's site dir.
    shared = sorted(set(_prefixes(environments[0])) | set(_prefixes(environments[1])), key=len, reverse=True)
    prefixes = (shared, shared)
    totals: dict[str, tuple[int, int]] = {}
    differences: list[Difference] = []
    for kind, key, name_field in (("probe", "probes", "probe"), ("entry", "entries", "entry")):
        if side_a.get(key) is None and side_b.get(key) is None:
            continue
        by_name = [{r[name_field]: r for r in side.get(key) or []} for side in (side_a, side_b)]
        equal, total, found = compare_records(kind, by_name[0], by_name[1], prefixes)
        totals[kind] = (equal, total)
        differences += found
    return Comparison(environments, totals, differences)


# ------------------------------------------------------------------ running the sides
def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env["PYTHONHASHSEED"] = HASH_SEED
    return env


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def environment(python: str) -> dict[str, Any]:
    """What ``python`` runs: its torch, executorch and vkbench (which must be this checkout's).

    Raises :class:`TorchCompareError` for an interpreter that is not there or cannot import them.
    """
    python = os.path.abspath(python)  # not resolve(): a venv's python is a link to its base's
    if not Path(python).exists():
        raise TorchCompareError(f"no interpreter at {python}")
    if not os.access(python, os.X_OK) or Path(python).is_dir():
        raise TorchCompareError(f"{python} is not an executable interpreter")
    try:
        done = subprocess.run([python, "-c", _ENVIRONMENT], cwd=ROOT, env=_child_env(), capture_output=True,
                              text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise TorchCompareError(f"{python} cannot run: {error}") from None
    if done.returncode != 0:
        raise TorchCompareError(f"{python} cannot import torch, executorch and vkbench: "
                                f"{_last_line(done.stderr)}")
    try:
        found = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise TorchCompareError(f"{python} printed no environment: {_last_line(done.stdout)}") from None
    if Path(found["vkbench"]).resolve().parent != (ROOT / "vkbench").resolve():
        raise TorchCompareError(f"{python} imports vkbench from {found['vkbench']}, "
                                f"not this checkout ({ROOT})")
    found["interpreter"] = python
    return found


def _document(stdout: str) -> dict[str, Any]:
    """The JSON document a vkbench command printed (anything a library printed before it is skipped)."""
    try:
        return json.loads(stdout)
    except ValueError:
        start = stdout.find("\n{")
        if start < 0:
            raise
        document, _ = json.JSONDecoder().raw_decode(stdout[start + 1:])
        return document


def run_vkbench(python: str, arguments: Sequence[str], log: Path) -> dict[str, Any]:
    """``python -m vkbench ARGUMENTS`` on this checkout; its JSON document. stderr goes to ``log``."""
    with log.open("w") as err:
        done = subprocess.run([python, "-m", "vkbench", *arguments], cwd=ROOT, env=_child_env(),
                              stdout=subprocess.PIPE, stderr=err, text=True)
    command = f"{python} -m vkbench {' '.join(arguments[:3])}{' ...' if len(arguments) > 3 else ''}"
    if done.returncode != 0:
        raise TorchCompareError(f"{command}: exit {done.returncode}: {_last_line(log.read_text())} "
                                f"(log: {log})")
    try:
        return _document(done.stdout)
    except ValueError:
        raise TorchCompareError(f"{command}: no JSON document on stdout (log: {log})") from None


def measure_side(python: str, environment_: dict[str, Any], scratch: Path, label: str, *,
                 probes_only: bool = False, entries: Sequence[str] = tuple(FAST_ENTRIES),
                 progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """One side's document: its environment, every probe's record, unless ``probes_only`` the entries'."""
    say = progress or (lambda line: None)
    side: dict[str, Any] = {"environment": environment_, "seconds": {}}
    start = time.perf_counter()
    say(f"{label}: vkbench probe --json ({environment_['torch']}) ...")
    side["probes"] = run_vkbench(python, ["probe", "--json"], scratch / f"{label}-probe.log")["probes"]
    side["seconds"]["probes"] = round(time.perf_counter() - start, 1)
    say(f"{label}: {len(side['probes'])} probes in {side['seconds']['probes']:.0f} s")
    if not probes_only:
        start = time.perf_counter()
        arguments = ["policies", "--json"] + [a for entry in entries for a in ("--policy", entry)]
        say(f"{label}: vkbench policies --json over {len(entries)} fast entries ...")
        side["entries"] = run_vkbench(python, arguments, scratch / f"{label}-policies.log")["rows"]
        side["seconds"]["entries"] = round(time.perf_counter() - start, 1)
        say(f"{label}: {len(side['entries'])} entries in {side['seconds']['entries']:.0f} s")
    return side


def run(pythons: Sequence[str], *, probes_only: bool = False, keep: Path | None = None,
        progress: Callable[[str], None] | None = None) -> Comparison:
    """Measure both sides side by side (counts are exact; only the wall time shares the cores) and compare.

    ``keep`` gets ``a.json`` and ``b.json`` (each side's document) and the children's stderr logs.
    """
    if len(pythons) != 2:
        raise TorchCompareError(f"give exactly two interpreters (--python A --python B), not {len(pythons)}")
    environments = [environment(python) for python in pythons]
    pythons = [env["interpreter"] for env in environments]
    for label, env in zip("AB", environments, strict=True):
        if progress:
            progress(f"{label}: {env['interpreter']}: torch {env['torch']}, executorch {env['executorch']}, "
                     f"Python {env['python']}")
    scratch = keep or Path(tempfile.mkdtemp(prefix="vkbench-torch-compare-"))
    scratch.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(measure_side, python, env, scratch, label, probes_only=probes_only,
                               progress=progress)
                   for python, env, label in zip(pythons, environments, "ab", strict=True)]
        sides = [future.result() for future in futures]
    for label, side in zip("ab", sides, strict=True):
        (scratch / f"{label}.json").write_text(json.dumps(side, indent=1) + "\n")
    return compare(sides[0], sides[1])


def measured(folder: Path) -> Comparison:
    """Compare the two side documents an earlier run kept in ``folder`` (``a.json``, ``b.json``)."""
    try:
        sides = [json.loads((folder / f"{label}.json").read_text()) for label in "ab"]
    except (OSError, ValueError) as error:
        raise TorchCompareError(f"{folder}: no side documents to compare ({error})") from None
    if not all(isinstance(side, dict) and isinstance(side.get("probes"), list) for side in sides):
        raise TorchCompareError(f"{folder}: a.json and b.json must each hold a 'probes' list")
    return compare(sides[0], sides[1])


def report(comparison: Comparison, as_markdown: bool = False) -> str:
    """The sides, the table of what differs (when anything does) and the one-line summary."""
    lines = []
    for label, env in zip("AB", comparison.environments, strict=True):
        seconds = ", ".join(f"{k} {v:.0f} s" for k, v in env.get("seconds", {}).items())
        lines.append(f"{label}: {env.get('interpreter', '?')}: torch {env.get('torch', '?')}, "
                     f"executorch {env.get('executorch', '?')}, Python {env.get('python', '?')}"
                     + (f" ({seconds})" if seconds else ""))
    if comparison.differences:
        lines.append(tables.draw(as_markdown)(comparison.headers(), comparison.rows()))
    lines.append(comparison.summary())
    return "\n".join(lines)


# ------------------------------------------------------------------ interpreter B
def _pip_error(stderr: str) -> str:
    """pip's own error lines (its last line alone is a generic link), at most three."""
    keys = ("ERROR:", "Could not", "no matching distribution", "NewConnectionError", "Failed to establish")
    found = [line.strip() for line in stderr.splitlines() if any(k in line for k in keys)]
    return " / ".join(found[:3]) or _last_line(stderr)


def make_overlay(target: Path, torch: str, torchvision: str, base_python: str, extra: Sequence[str] = (),
                 progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """A venv at ``target`` holding only the given torch and torchvision; every other package is the base's.

    The wheels come from :data:`CPU_INDEX` when it answers, else from pip's configured index (PyPI), with
    ``--no-deps``; :data:`OVERLAY_PTH` appends ``base_python``'s site-packages (``site.addsitedir``, so
    their own ``.pth`` files run too). ``extra`` requirements go in beside them, ``--no-deps`` too: PyPI's
    Linux torch is a CUDA build, and one whose pinned CUDA library differs from the base's cannot be
    imported (torch 2.13.0 over the base's nccl 2.28.9: ``undefined symbol: ncclCommResume``). Everything
    is installed before the link is written, so pip never sees (nor touches) the base's packages.
    Returns the new interpreter's :func:`environment`.
    """
    from vkbench.build.interpreters import site_dirs

    say = progress or (lambda line: None)
    if not Path(base_python).exists():
        raise TorchCompareError(f"no base interpreter at {base_python}")
    if target.exists() and any(target.iterdir()):
        raise TorchCompareError(f"{target} exists and is not empty: remove it or name another folder")
    real = "import sys; print(getattr(sys, '_base_executable', sys.executable))"  # under the base venv
    probe = subprocess.run([base_python, "-c", real], capture_output=True, text=True)
    if probe.returncode != 0:
        raise TorchCompareError(f"{base_python} cannot run: {_last_line(probe.stderr)}")
    subprocess.run([probe.stdout.strip(), "-m", "venv", "--without-pip", str(target)], check=True)
    python = target / "bin" / "python"
    wheels = [f"torch=={torch}", f"torchvision=={torchvision}", *extra]
    attempts: list[list[str]] = [["--index-url", CPU_INDEX, "--retries", "0", "--timeout", "20"], []]
    errors = []
    for index_options in attempts:
        command = [base_python, "-m", "pip", "--python", str(python), "install", "--no-deps", *index_options,
                   *wheels]
        say("$ " + " ".join(command))
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode == 0:
            say(_last_line(done.stdout))
            break
        errors.append(_pip_error(done.stderr))
        say(f"failed: {errors[-1]}")
    else:
        raise TorchCompareError(f"pip could not install {' '.join(wheels)}: {'; '.join(errors)}")
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    lines = [f"import site; site.addsitedir({site!r})" for site in site_dirs(base_python) if site != purelib]
    (Path(purelib) / OVERLAY_PTH).write_text("\n".join(lines) + "\n")
    found = environment(str(python))
    own = Path(found["torch_file"]).resolve().is_relative_to(target.resolve())
    if not found["torch"].startswith(torch) or not own:
        raise TorchCompareError(f"{python} imports torch {found['torch']} from {found['torch_file']}, "
                                f"not {torch} from {target}")
    say(f"{python}: torch {found['torch']} ({found['torch_file']}), executorch {found['executorch']}")
    return found

