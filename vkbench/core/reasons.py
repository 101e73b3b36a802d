"""Why the Vulkan partitioner left a node on the CPU, in its own words.

``VulkanSupportedOperators.log_skip(node, reason)`` is the partitioner's single
point where a rejection and its reason meet the node. We wrap that method for
one lowering and record ``node.name -> [reasons]``. Commits that predate
``log_skip`` still log ``Due to [reason], skipping <node>`` on the root logger;
a logging handler keeps those, keyed by op name instead of node name.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from vkbench.core.phases import patched

_LOGGED_SKIP = re.compile(r"Due to \[(?P<reason>.*?)\], skipping .*?= (?P<op>[\w.:]+)\(")

#: Reason given for a CPU node the partitioner accepted but did not place in
#: any partition (e.g. a lone ``getitem`` or a node the fx partitioner refused
#: to merge because it would create a cycle).
NOT_PARTITIONED = "supported, but not placed in any Vulkan partition"
#: Reason for a CPU node the partitioner never reported on.
NOT_REPORTED = "no reason reported by the partitioner"


@dataclass
class SkipReasons:
    """Reasons recorded during one lowering."""

    by_node: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    by_op: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add(self, node_name: str | None, op: str, reason: str) -> None:
        if node_name is not None and reason not in self.by_node[node_name]:
            self.by_node[node_name].append(reason)
        if reason not in self.by_op[op]:
            self.by_op[op].append(reason)

    def for_node(self, node_name: str, op: str, supported: bool | None = None) -> list[str]:
        """Reasons for one CPU node; never empty."""
        if self.by_node.get(node_name):
            return list(self.by_node[node_name])
        if self.by_op.get(op):
            return list(self.by_op[op])
        return [NOT_PARTITIONED if supported else NOT_REPORTED]


class _SkipLogHandler(logging.Handler):
    def __init__(self, sink: SkipReasons) -> None:
        super().__init__(level=logging.INFO)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        match = _LOGGED_SKIP.search(record.getMessage())
        if match:
            self.sink.add(None, match["op"], match["reason"])


def op_name(target: Any) -> str:
    """The name the seed uses for a call target (``aten.elu.default``)."""
    return getattr(target, "__name__", str(target))


@contextlib.contextmanager
def recording_skip_reasons(operators_class: type | None) -> Iterator[SkipReasons]:
    """Record every ``log_skip`` during the block, with the root logger quiet.

    The partitioner logs one INFO line per rejected node on the root logger;
    we keep the reasons and stop the lines from reaching the terminal.
    """
    sink = SkipReasons()

    def replacement(original):
        def log_skip(self, node, reason, *args, **kwargs):
            if getattr(node, "op", None) == "call_function":
                sink.add(node.name, op_name(node.target), str(reason))
            return original(self, node, reason, *args, **kwargs)

        return log_skip

    root = logging.getLogger()
    handler = _SkipLogHandler(sink)
    saved_level, saved_handlers = root.level, list(root.handlers)
    # Only our handler sees the skip lines while we lower.
    for existing in saved_handlers:
        root.removeHandler(existing)
    quiet = logging.NullHandler()  # keeps logging's last-resort stderr handler out
    root.addHandler(quiet)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        with patched(operators_class, "log_skip", replacement) as hooked:
            if hooked:
                # The API hook is authoritative; drop the log lines entirely.
                root.removeHandler(handler)
                root.setLevel(logging.ERROR)
            yield sink
    finally:
        root.removeHandler(handler)
        root.removeHandler(quiet)
        for existing in saved_handlers:
            root.addHandler(existing)
        root.setLevel(saved_level)
