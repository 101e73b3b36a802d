"""What-if: torch.fx's ``propose_partitions`` without horizontal fusion.

Most of ``VulkanPartitioner.partition``'s time on ``Blocks(n)`` is torch.fx's
``CapabilityBasedPartitioner.propose_partitions`` trying merges that can only
join *independent* partitions. torch has no knob to turn that off, so
:func:`without_horizontal_fusion` swaps in the installed function with two
hunks changed, for the duration of a block. It answers "what would one
user-side change do" (a row in the issue), not how the partitioner should be
fixed.

What torch 2.11.0 does (``torch/fx/passes/infra/partitioner.py``, lines
219-247): for each node, in reverse topological order, a supported node gets
a new partition, and then *every* existing partition is a merge candidate
(lines 235-239, "merge all possible partitions"); the candidates are merged
one by one unless ``maybe_merge_partition``'s cycle check refuses. That runs
for unsupported nodes too (no partition is made, the existing ones are merged
with each other): the "limited horizontal fusion" torch's comment at lines
223-227 says could be short-cut by an ``else`` block. A merge of the new node's
partition with a partition that holds none of its users only succeeds when
no path joins them (a path would start at a user of the node: one on the CPU
makes the merge a cycle, one in another partition makes it one unless that
partition is merged first), so every merge it adds is horizontal; the ones
it refuses cost a cycle check (a walk over the downstream nodes of every
user of both partitions) each.

The two hunks (:data:`HUNKS`, against the lines above):

1. after line 233, ``else: continue``: a node that gets no partition
   (unsupported; a supported node is never already assigned inside the loop)
   merges nothing. This is the short-cut torch's comment describes.
2. lines 235-239: the candidates are the partitions of the node's users
   (``node.users``), in the same ``partitions_order`` order, instead of all
   partitions. Every merge left is producer -> consumer (vertical).

Everything else (the cycle check, the merge itself, getitem reassignment,
single-node filtering) is torch's own code: the patched function is compiled
from the installed function's source with these two edits. It is built only
when that source is byte-for-byte the torch 2.11.0 function the hunks were
written against (:data:`SOURCE_SHA256`) and is what the interpreter loaded;
anything else raises :class:`TorchMismatch`, so it never patches a torch it
was not checked against.

Horizontal fusion changes partitions wherever independent supported branches
meet without a supported common producer (their partitions stay separate
here). On ``Blocks(n)`` it finds nothing to fuse: n = 50..400 keep their n+1
partitions, node for node, and only the refused checks go (n=400: 60 s ->
3.5 s of CPU for the whole ``partition``). Measured with torch 2.11.0 and
executorch 1.5.1: ``tdmpc/pi`` and ``vqbet/gpt`` keep theirs, but ``act/model``
goes from 3 to 5 partitions (its sin/cos position-embedding branches were
fused horizontally) and ``diffusion/unet_step`` from 29 to 30, with the same
nodes on Vulkan. Hunk 1 alone (torch's ``else``) keeps ``act/model``'s 3 but
saves nothing on ``Blocks``; hunk 2 alone gives ``act/model`` 4.
:func:`proposed_partitions` records what ``propose_partitions`` returned, to
compare.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import textwrap
from collections.abc import Iterator
from types import FunctionType
from typing import Any

from vkbench.core.compat import safe_import

_fx = safe_import("torch.fx.passes.infra.partitioner")

#: The torch release the hunks were written against.
TORCH_VERSION = "2.11.0"
#: sha256 of ``inspect.getsource(CapabilityBasedPartitioner.propose_partitions)`` in torch 2.11.0.
SOURCE_SHA256 = "f9ee7d13c804a0e1ed2cf2805da0e2ae060a3e7d908119e4e0a1e6eeac8e0b3f"
#: ``(torch's text, replacement)`` in the dedented source; each torch text occurs exactly once.
HUNKS = (
    (  # 1. lines 233-235: an unsupported node merges nothing (torch's comment: "adding an `else` block")
        "            merge_candidates[partition_id] = None\n"
        "\n"
        "        # merge all possible partitions\n",
        "            merge_candidates[partition_id] = None\n"
        "        else:  # vkbench.workloads.fusion hunk 1: no partition for this node, no horizontal merge\n"
        "            continue\n"
        "\n"
        "        # merge all possible partitions\n",
    ),
    (  # 2. lines 236-239: candidates are the partitions of the node's users, not all partitions
        "        for partition_id, _ in sorted(\n"
        "            partitions_order.items(), key=operator.itemgetter(1)\n"
        "        ):\n"
        "            merge_candidates[partition_id] = None\n",
        "        for partition_id in sorted(  # vkbench.workloads.fusion hunk 2: consumers' partitions only\n"
        "            {assignment[user] for user in node.users if user in assignment},\n"
        "            key=partitions_order.__getitem__,\n"
        "        ):\n"
        "            merge_candidates[partition_id] = None\n",
    ),
)
_FILENAME = "<vkbench.workloads.fusion: torch.fx propose_partitions without horizontal fusion>"


class TorchMismatch(RuntimeError):
    """The installed ``propose_partitions`` is not the one :data:`HUNKS` were written against."""


def _partitioner_class() -> Any:
    if not _fx:
        raise TorchMismatch(f"torch.fx.passes.infra.partitioner is unavailable: {_fx!r}")
    return _fx.CapabilityBasedPartitioner


def _compile(source: str) -> FunctionType:
    """``propose_partitions`` from its dedented ``source``, in the torch module's globals."""
    namespace: dict[str, Any] = {}
    exec(compile(source, _FILENAME, "exec", dont_inherit=True), vars(_fx), namespace)  # noqa: S102 - torch's own source
    return namespace["propose_partitions"]


def _fingerprint(code: Any) -> tuple[Any, ...]:
    """Names, locals and bytecode size: equal when ``code`` was compiled from the same source.

    (Not the bytes themselves: those differ in the call sequences the compiler picks between the
    loaded ``.pyc`` and a fresh ``compile``.)
    """
    return code.co_names, code.co_varnames, code.co_cellvars, len(code.co_code)


def patched_propose_partitions() -> FunctionType:
    """torch's ``propose_partitions`` with :data:`HUNKS` applied; raises :class:`TorchMismatch`.

    Checks that the class attribute is torch's own function (not a wrapper:
    enter :func:`without_horizontal_fusion` outside other patches), that its
    source hashes to :data:`SOURCE_SHA256`, and that this source is what the
    interpreter loaded (:func:`_fingerprint`).
    """
    cls = _partitioner_class()
    original = vars(cls).get("propose_partitions")
    code = getattr(original, "__code__", None)
    if (
        not isinstance(original, FunctionType)
        or hasattr(original, "__wrapped__")
        or code is None
        or code.co_filename != _fx.__file__
    ):
        raise TorchMismatch(
            f"CapabilityBasedPartitioner.propose_partitions is {original!r}, not torch's own function "
            "(already patched? enter without_horizontal_fusion() outside other patches)"
        )
    source = inspect.getsource(original)
    digest = hashlib.sha256(source.encode()).hexdigest()
    if digest != SOURCE_SHA256:
        import torch

        raise TorchMismatch(
            f"torch {torch.__version__}'s CapabilityBasedPartitioner.propose_partitions differs from "
            f"torch {TORCH_VERSION}'s (source sha256 {digest[:12]}, expected {SOURCE_SHA256[:12]}); "
            "vkbench.workloads.fusion only patches the function it was checked against"
        )
    source = textwrap.dedent(source)
    if _fingerprint(_compile(source).__code__) != _fingerprint(code):
        raise TorchMismatch(f"the source of {code.co_filename} is not what this interpreter loaded")
    for old, new in HUNKS:
        if source.count(old) != 1:  # cannot happen with the hashed source; a guard for edits of HUNKS
            raise TorchMismatch(f"hunk not found exactly once: {old.splitlines()[0].strip()!r}")
        source = source.replace(old, new)
    function = _compile(source)
    function.__qualname__ = original.__qualname__
    function.__module__ = original.__module__
    function.__doc__ = "torch's propose_partitions without horizontal fusion (vkbench.workloads.fusion)"
    return function


def unpatchable_reason() -> str | None:
    """Why :func:`without_horizontal_fusion` would refuse here, or None when it can patch."""
    try:
        patched_propose_partitions()
    except TorchMismatch as error:
        return str(error)
    return None


@contextlib.contextmanager
def without_horizontal_fusion() -> Iterator[None]:
    """``CapabilityBasedPartitioner.propose_partitions`` without horizontal fusion, for a block.

    Raises :class:`TorchMismatch` (before patching anything) on any torch but
    the checked one; restores torch's function on exit, also on error.
    """
    cls = _partitioner_class()
    function = patched_propose_partitions()
    original = vars(cls)["propose_partitions"]
    cls.propose_partitions = function
    try:
        yield
    finally:
        cls.propose_partitions = original


@contextlib.contextmanager
def proposed_partitions() -> Iterator[list[list[frozenset[str]]]]:
    """Record, per ``propose_partitions`` call of the block, each partition's node names.

    Wraps whatever ``propose_partitions`` is current, so enter it inside
    :func:`without_horizontal_fusion` to record the patched result.
    """
    cls = _partitioner_class()
    own = vars(cls)["propose_partitions"]
    calls: list[list[frozenset[str]]] = []

    def recording(self: Any) -> Any:
        partitions = own(self)
        calls.append([frozenset(node.name for node in partition.nodes) for partition in partitions])
        return partitions

    cls.propose_partitions = recording
    try:
        yield calls
    finally:
        cls.propose_partitions = own


def same_partitions(a: list[frozenset[str]], b: list[frozenset[str]]) -> bool:
    """Same number of partitions, holding the same node sets (order and ids aside)."""
    return len(a) == len(b) and set(a) == set(b)
