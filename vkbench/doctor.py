"""What this environment can measure: versions, backends, Vulkan runtime/device.

Runtime benchmarks skip themselves when the Vulkan runtime is absent; this is
where a user finds out why (the PyPI wheel ships the partitioner, not the
runtime).
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

from vkbench.versions import executorch_identity, stack_versions


def registered_backends() -> list[str] | str:
    """Names of runtime backends registered in ExecuTorch's pybindings."""
    try:
        from executorch.extension.pybindings import portable_lib  # noqa: F401
        from executorch.runtime import Runtime

        registry = Runtime.get().backend_registry
        return sorted(registry.registered_backend_names)
    except Exception as error:  # noqa: BLE001 - report, never crash the doctor
        return f"unavailable ({type(error).__name__}: {error})"


def vulkan_devices() -> list[str] | str:
    """Physical Vulkan devices reported by ``vulkaninfo --summary``, if installed."""
    if shutil.which("vulkaninfo") is None:
        return "vulkaninfo not installed (Debian: vulkan-tools)"
    try:
        out = subprocess.run(
            ["vulkaninfo", "--summary"], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"vulkaninfo failed: {error}"
    names = [line.split("=", 1)[1].strip() for line in out.splitlines() if "deviceName" in line]
    return names


def diagnose() -> dict[str, Any]:
    backends = registered_backends()
    has_vulkan = isinstance(backends, list) and "VulkanBackend" in backends
    devices = vulkan_devices()
    report: dict[str, Any] = {
        "versions": stack_versions(),
        "executorch": executorch_identity(),
        "registered_backends": backends,
        "vulkan_runtime": has_vulkan,
        "vulkan_devices": devices,
        "vulkan_device": isinstance(devices, list) and bool(devices),
    }
    if not has_vulkan:
        report["runtime_benchmarks"] = (
            "skipped: this ExecuTorch has no VulkanBackend registered (the PyPI wheel ships the "
            "Vulkan partitioner but not the runtime); build with EXECUTORCH_BUILD_VULKAN=1"
        )
    elif not report["vulkan_device"]:
        report["runtime_benchmarks"] = "skipped: no Vulkan device (install mesa-vulkan-drivers)"
    else:
        report["runtime_benchmarks"] = "enabled"
    return report
