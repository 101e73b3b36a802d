"""The registry of policy entries: one exportable inference network each.

An *entry* is a tensor computation a LeRobot policy runs per action (ACT's
``model(batch)``, one diffusion UNet step, a VLA's prefix pass, ...). Python
queues, tokenizers and schedulers stay outside. Builders construct the policy
offline from its config with random weights and return
``(module, example_inputs)``; ``lower``/``export_program`` take it from there.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

Builder = Callable[[], tuple[torch.nn.Module, tuple[Any, ...]]]


def offline() -> None:
    """Make sure nothing in this process tries the network (hub, tokenizers)."""
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ[name] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:  # huggingface_hub reads the variable once, at import
        import huggingface_hub.constants as hub_constants

        hub_constants.HF_HUB_OFFLINE = True
    except Exception:  # noqa: BLE001 - not installed means nothing to configure
        pass


offline()


@dataclass(frozen=True)
class Entry:
    """One exportable network of one policy."""

    name: str  #: ``policy/part``, e.g. ``act/model``
    policy: str  #: the lerobot.policies package name
    description: str
    builder: Builder = field(repr=False, compare=False)
    notes: str = ""
    #: Minutes-long (big VLAs); excluded from fast tests and default benchmarks.
    slow: bool = False
    #: Set when the network is smaller than the released model (depth/width).
    reduced: str = ""

    def build(self) -> tuple[torch.nn.Module, tuple[Any, ...]]:
        offline()
        torch.manual_seed(0)
        module, inputs = self.builder()
        return module.eval(), tuple(inputs)


ENTRIES: dict[str, Entry] = {}


def register(
    name: str,
    description: str,
    *,
    notes: str = "",
    slow: bool = False,
    reduced: str = "",
) -> Callable[[Builder], Builder]:
    """Decorator: register ``builder`` as entry ``name`` (``policy/part``)."""

    def decorate(builder: Builder) -> Builder:
        policy = name.split("/", 1)[0]
        if name in ENTRIES:
            raise ValueError(f"duplicate policy entry {name!r}")
        ENTRIES[name] = Entry(name, policy, description, builder, notes, slow, reduced)
        return builder

    return decorate


def policies() -> list[str]:
    """Policy package names that have at least one entry, in registry order."""
    return list(dict.fromkeys(entry.policy for entry in ENTRIES.values()))


def select(names: list[str] | None = None, *, include_slow: bool = True) -> list[Entry]:
    """Entries named by ``names`` (entry names or policy names); all when empty.

    Raises ``KeyError`` naming the first unknown name.
    """
    if not names:
        return [e for e in ENTRIES.values() if include_slow or not e.slow]
    chosen: dict[str, Entry] = {}
    for name in names:
        if name in ENTRIES:
            chosen[name] = ENTRIES[name]
            continue
        matched = [e for e in ENTRIES.values() if e.policy == name]
        if not matched:
            raise KeyError(name)
        chosen.update((e.name, e) for e in matched)
    return list(chosen.values())


def fast_entries() -> list[str]:
    return [e.name for e in ENTRIES.values() if not e.slow]


def slow_entries() -> list[str]:
    return [e.name for e in ENTRIES.values() if e.slow]
