"""What this machine can execute: runtime backends, Vulkan devices, texture limits.

The PyPI wheel has no Vulkan runtime; a build from ``vkbench build full`` has
one. Runners ask here whether a backend is registered and, when it is not,
say why (asv shows the reason as a skip). ``vkbench doctor`` prints :func:`vulkan_runtime_status`.

Partitioner texture limits: ``VKBENCH_TEXTURE_LIMITS="x,y,z"`` if set, else the
device's ``maxImageDimension3D`` read from ``vulkaninfo`` when it is below the
partitioner's default 16384 (Mesa lavapipe: 4096), else the default.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from typing import Any

from vkbench import settings
from vkbench.core.compat import safe_import

_runtime = safe_import("executorch.runtime")

BACKEND = "VulkanBackend"
#: The partitioner's default texture limits.
DEFAULT_TEXTURE_LIMIT = 16384
#: Runtime backend each lowering target needs registered (portable needs none).
RUNTIME_BACKEND = {"vulkan": BACKEND, "xnnpack": "XnnpackBackend", "portable": None}


def backend_registry() -> Any:
    return _runtime.Runtime.get().backend_registry  # type: ignore[union-attr]


def runtime_import_error() -> str | None:
    """Why ``executorch.runtime`` did not import here, or None when it did."""
    if _runtime:
        return None
    try:
        _runtime.Runtime  # noqa: B018 - raises NotImplementedError with the import error
    except NotImplementedError as error:
        return str(error)
    return "executorch.runtime is unavailable"


def runtime_module() -> Any:
    """``executorch.runtime``, or ``NotImplementedError`` saying why it did not import."""
    if (missing := runtime_import_error()) is not None:
        raise NotImplementedError(missing)
    return _runtime


def backend_registered(name: str) -> tuple[bool, str]:
    """``(registered, reason)`` for runtime backend ``name`` in this Python's runtime."""
    if (missing := runtime_import_error()) is not None:
        return False, missing
    try:
        registry = backend_registry()
        if registry.is_available(name):
            return True, f"{name} is registered"
        names = ", ".join(registry.registered_backend_names) or "none"
    except Exception as error:  # noqa: BLE001
        return False, f"executorch.runtime failed: {type(error).__name__}: {error}"
    return False, f"{name} is not registered in this executorch (registered: {names})"


def vulkan_registered() -> tuple[bool, str]:
    """``(registered, reason)`` for the Vulkan backend, saying how to get one."""
    registered, reason = backend_registered(BACKEND)
    if not reason.startswith(f"{BACKEND} is not registered"):  # registered, or no runtime at all
        return registered, reason
    return False, (f"no Vulkan runtime: {reason}; the PyPI wheel has none, build one with "
                   "`vkbench build full`")


@functools.lru_cache(maxsize=1)
def vulkan_devices() -> dict[str, Any]:
    """Devices ``vulkaninfo --summary`` lists (``available`` None without vulkaninfo)."""
    tool = shutil.which("vulkaninfo")
    if tool is None:
        return {"vulkaninfo": None, "available": None, "devices": [], "error": "vulkaninfo not on PATH"}
    try:
        result = subprocess.run([tool, "--summary"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        return {"vulkaninfo": tool, "available": None, "devices": [], "error": str(error)}
    devices: list[dict[str, str]] = []
    for block in re.split(r"\n(?=GPU\d+:)", result.stdout):
        name = re.search(r"deviceName\s*=\s*(.+)", block)
        if name:
            kind = re.search(r"deviceType\s*=\s*(\S+)", block)
            api = re.search(r"apiVersion\s*=\s*(\S+)", block)
            devices.append(
                {
                    "name": name.group(1).strip(),
                    "type": kind.group(1) if kind else "",
                    "api": api.group(1) if api else "",
                }
            )
    info: dict[str, Any] = {"vulkaninfo": tool, "available": bool(devices), "devices": devices}
    if result.returncode != 0 and not devices:
        info["error"] = (result.stderr.strip().splitlines() or [f"exit {result.returncode}"])[-1]
    return info


@functools.lru_cache(maxsize=1)
def device_max_image_3d() -> int | None:
    """Smallest ``maxImageDimension3D`` over the devices ``vulkaninfo`` reports."""
    tool = shutil.which("vulkaninfo")
    if tool is None:
        return None
    try:
        out = subprocess.run([tool], capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    values = [int(v) for v in re.findall(r"maxImageDimension3D\s*=\s*(\d+)", out)]
    return min(values) if values else None


def texture_limits() -> tuple[int, int, int] | None:
    """Texture limits to give the partitioner (None: its default)."""
    env = settings.text("VKBENCH_TEXTURE_LIMITS")
    if env:
        parts = [int(p) for p in re.split(r"[,x ]+", env) if p]
        if len(parts) == 1:
            parts *= 3
        if len(parts) != 3:
            raise ValueError(f"VKBENCH_TEXTURE_LIMITS must be 'x,y,z' or one number, got {env!r}")
        return (parts[0], parts[1], parts[2])
    limit = device_max_image_3d()
    if limit is not None and limit < DEFAULT_TEXTURE_LIMIT:
        return (limit, limit, limit)
    return None


def partitioner_options() -> dict[str, Any]:
    limits = texture_limits()
    return {"texture_limits": limits} if limits else {}


def vulkan_runtime_status() -> dict[str, Any]:
    """What ``vkbench doctor`` shows about running programs on Vulkan."""
    registered, reason = vulkan_registered()
    status: dict[str, Any] = {
        "vulkan_backend_registered": registered,
        "reason": reason,
        "backends": [],
    }
    try:
        status["backends"] = sorted(backend_registry().registered_backend_names)
    except Exception:  # noqa: BLE001
        pass
    try:
        from executorch import version

        status["executorch"] = version.__version__
    except Exception:  # noqa: BLE001
        status["executorch"] = None
    devices = vulkan_devices()
    status["vulkan_device_present"] = devices["available"]
    status["vulkan_devices"] = devices["devices"]
    status["vulkaninfo"] = devices["vulkaninfo"]
    if "error" in devices:
        status["vulkaninfo_error"] = devices["error"]
    status["runnable"] = bool(registered and devices["available"] is not False)
    return status
