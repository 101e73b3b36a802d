"""A recent ``glslc`` for building the ExecuTorch Vulkan backend on Debian 12.

Debian 12's ``glslc`` (shaderc 2023.x) rejects the ``GL_KHR_cooperative_matrix``
and ``GL_EXT_integer_dot_product`` shaders the Vulkan backend compiles, and an
ExecuTorch build without a usable ``glslc`` silently drops Vulkan. Debian 13
(trixie) ships glslc 2025.x, which compiles them, but it needs trixie's libc6
and libstdc++6. So:

1. a private apt tree (its own sources list, lists and archive cache: the
   system's apt configuration and state are never touched) is pointed at
   trixie, ``apt-get update``-d and ``apt-get download`` fetches ``glslc``,
   its shared-library dependencies, ``libc6``, ``libstdc++6`` and
   ``libgcc-s1`` (signatures are checked with the system's Debian keyring);
2. the ``.deb`` files are unpacked (``dpkg-deb -x``) into ``<cache>/root``;
3. ``<cache>/glslc`` is a wrapper that runs trixie's ``glslc`` through
   trixie's own loader: ``ld-linux-x86-64.so.2 --library-path ... glslc``.

``ensure_glslc()`` returns the wrapper's path (doing 1-3 once; later calls
only check it). ``vkbench build glslc [--cache DIR]`` prints it.
A ``glslc`` already on ``PATH`` that compiles both extensions is used as is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from vkbench import settings


def default_cache() -> Path:
    """``$VKBENCH_GLSLC_CACHE``, else ``~/.cache/vkbench/glslc``."""
    return settings.path("VKBENCH_GLSLC_CACHE") or Path.home() / ".cache" / "vkbench" / "glslc"


KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
#: Always taken from the suite, so glslc runs on the libc it was built for.
RUNTIME_PACKAGES = ("libc6", "libstdc++6", "libgcc-s1")
#: Dependencies that are not libraries glslc loads (or that we provide above).
_SKIP_DEPS = {"gcc-14-base", "gcc-15-base", "libc6", "libstdc++6", "libgcc-s1"}

#: A compute shader that needs both extensions Debian 12's glslc rejects.
PROBE_SHADER = """#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_integer_dot_product : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer B { int v[]; } b;
void main() {
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> m;
  int x = dotPacked4x8EXT(b.v[0], b.v[1]);
  b.v[gl_GlobalInvocationID.x] = x;
}
"""


def log(message: str) -> None:
    print(f"[vkbench.glslc] {message}", flush=True)


def glslc_works(glslc: str | os.PathLike[str]) -> bool:
    """Whether ``glslc`` compiles :data:`PROBE_SHADER` to SPIR-V 1.6."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "probe.comp"
        src.write_text(PROBE_SHADER)
        try:
            result = subprocess.run(
                [str(glslc), "--target-env=vulkan1.3", str(src), "-o", str(Path(tmp) / "probe.spv")],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except (OSError, subprocess.SubprocessError):
            return False
        return result.returncode == 0


def _apt(apt_dir: Path, *args: str, cwd: Path | None = None) -> str:
    options = [
        f"-o=Dir::Etc::sourcelist={apt_dir / 'sources.list'}",
        "-o=Dir::Etc::sourceparts=-",
        f"-o=Dir::Etc::preferences={apt_dir / 'preferences'}",
        "-o=Dir::Etc::preferencesparts=-",
        f"-o=Dir::State::Lists={apt_dir / 'lists'}",
        f"-o=Dir::State::status={apt_dir / 'status'}",
        f"-o=Dir::Cache={apt_dir / 'cache'}",
        "-o=APT::Architecture=amd64",
        "-o=APT::Architectures::=amd64",
        "-o=Debug::NoLocking=1",
        "-o=APT::Sandbox::User=root"
        if os.geteuid() == 0
        else "-o=APT::Sandbox::User=" + os.environ.get("USER", "nobody"),
    ]
    tool = "apt-cache" if args and args[0] in ("depends", "policy", "show") else "apt-get"
    command = [tool, *options, *args]
    result = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:1] + list(args))} failed:\n{result.stderr[-2000:]}")
    return result.stdout


def _library_deps(apt_dir: Path, package: str) -> list[str]:
    """``package`` and its Depends closure, minus the C runtime (added apart)."""
    out = _apt(
        apt_dir,
        "depends",
        "--recurse",
        "--no-recommends",
        "--no-suggests",
        "--no-conflicts",
        "--no-breaks",
        "--no-replaces",
        "--no-enhances",
        "--no-pre-depends",
        package,
    )
    names: list[str] = []
    for line in out.splitlines():
        name = line.strip()
        if name.startswith("Depends:"):
            name = name.split(":", 1)[1].strip()
        if not name or name.startswith("<") or " " in name or ":" in name:
            continue
        if name not in names and name not in _SKIP_DEPS:
            names.append(name)
    return names


def _write_wrapper(cache: Path) -> Path:
    root = cache / "root"
    loader = next(
        (
            p
            for p in (
                root / "usr/lib64/ld-linux-x86-64.so.2",
                root / "lib64/ld-linux-x86-64.so.2",
                root / "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
            )
            if p.exists()
        ),
        None,
    )
    if loader is None:
        raise RuntimeError(f"no ld-linux-x86-64.so.2 under {root}")
    libs = ":".join(
        str(p) for p in (root / "usr/lib/x86_64-linux-gnu", root / "lib/x86_64-linux-gnu") if p.exists()
    )
    wrapper = cache / "glslc"
    wrapper.write_text(
        "#!/bin/sh\n"
        f"# trixie's glslc through trixie's loader (written by vkbench.build.glslc)\n"
        f'exec "{loader.resolve()}" --library-path "{libs}" "{root / "usr/bin/glslc"}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def install(cache: Path | None = None) -> Path:
    """Download and unpack trixie's glslc into ``cache`` (:func:`default_cache`); return the wrapper."""
    cache = Path(cache or default_cache()).resolve()  # apt reads relative Dir:: paths under /etc/apt
    cache.mkdir(parents=True, exist_ok=True)
    apt_dir = cache / "apt"
    for sub in ("lists/partial", "cache/archives/partial"):
        (apt_dir / sub).mkdir(parents=True, exist_ok=True)
    (apt_dir / "status").touch()
    (apt_dir / "preferences").touch()
    suite, mirror = settings.text("VKBENCH_GLSLC_SUITE"), settings.text("VKBENCH_DEBIAN_MIRROR")
    (apt_dir / "sources.list").write_text(f"deb [signed-by={KEYRING}] {mirror} {suite} main\n")
    log(f"apt-get update ({suite}, private lists in {apt_dir})")
    _apt(apt_dir, "update")
    packages = _library_deps(apt_dir, "glslc") + list(RUNTIME_PACKAGES)
    debs = cache / "debs"
    shutil.rmtree(debs, ignore_errors=True)
    debs.mkdir()
    log(f"apt-get download {' '.join(packages)}")
    _apt(apt_dir, "download", *packages, cwd=debs)
    root = cache / "root"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    for deb in sorted(debs.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    (cache / "packages.txt").write_text("\n".join(sorted(p.name for p in debs.glob("*.deb"))) + "\n")
    wrapper = _write_wrapper(cache)
    if not glslc_works(wrapper):
        raise RuntimeError(f"{wrapper} does not compile the cooperative-matrix/dot-product probe")
    log(f"ok: {wrapper} ({version(wrapper)})")
    return wrapper


def version(glslc: str | os.PathLike[str]) -> str:
    try:
        out = subprocess.run([str(glslc), "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (out.strip().splitlines() or ["unknown"])[0]


def ensure_glslc(cache: Path | None = None, *, allow_system: bool = True) -> Path:
    """Path of a ``glslc`` that compiles the Vulkan backend's shaders."""
    cache = cache or default_cache()
    if allow_system:
        found = shutil.which("glslc")
        if found and glslc_works(found):
            return Path(found)
    wrapper = cache / "glslc"
    if wrapper.exists() and glslc_works(wrapper):
        return wrapper
    if (cache / "root/usr/bin/glslc").exists():
        wrapper = _write_wrapper(cache)
        if glslc_works(wrapper):
            return wrapper
    return install(cache)

