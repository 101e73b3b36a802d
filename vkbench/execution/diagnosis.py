"""What this environment can measure: versions, backends, Vulkan runtime/device.

Runtime benchmarks skip themselves when the Vulkan runtime is absent; this is
where a user finds out why (the PyPI wheel ships the partitioner, not the
runtime). The checks themselves live in :mod:`vkbench.execution.device`, which the
runtime benchmarks use to decide whether to skip, so both always agree.
"""

from __future__ import annotations

from typing import Any

from vkbench import settings
from vkbench.core.versions import executorch_identity, stack_versions


def diagnose() -> dict[str, Any]:
    from vkbench.execution.device import vulkan_runtime_status

    status = vulkan_runtime_status()
    has_vulkan = bool(status["vulkan_backend_registered"])
    names = [device["name"] for device in status["vulkan_devices"]]
    devices: list[str] | str = names if status["vulkaninfo"] else status.get(
        "vulkaninfo_error", "vulkaninfo not installed (Debian: vulkan-tools)"
    )
    report: dict[str, Any] = {
        "versions": stack_versions(),
        "executorch": executorch_identity(),
        "registered_backends": status["backends"],
        "vulkan_runtime": has_vulkan,
        "vulkan_devices": devices,
        "vulkan_device": bool(names),
        "settings": {name: {"value": value, "source": source}
                     for name, value, source in settings.effective()},
    }
    if not has_vulkan:
        report["runtime_benchmarks"] = f"skipped: {status['reason']}"
    elif not names:
        report["runtime_benchmarks"] = "skipped: no Vulkan device (install mesa-vulkan-drivers)"
    else:
        report["runtime_benchmarks"] = "enabled"
    return report
