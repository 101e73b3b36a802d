"""``full`` build mode: an ExecuTorch Python runtime that has the Vulkan backend.

The PyPI ``executorch`` wheel ships the Vulkan partitioner (Python) but no
Vulkan runtime. Since 1.5 the Linux wheel's runtime is a set of shared
libraries: ``extension/pybindings/_C`` needs ``lib/libexecutorch.so`` (core)
and one ``lib/libexecutorch_backend_<name>.so`` per backend, each of which
registers itself with the core's backend registry when loaded. So the
this build makes only what is missing (an *overlay* on the installed wheel):

1. ``backends/vulkan`` of the given ExecuTorch checkout (its own
   ``CMakeLists.txt``, shaders compiled by a recent ``glslc`` from
   :mod:`vkbench.build.glslc`) as a shared ``libexecutorch_backend_vulkan.so``
   linked against the installed wheel's ``libexecutorch.so``;
2. a private venv (``--out``) whose ``site-packages`` holds a copy of the
   installed ``executorch`` package plus that library, with ``_C`` patched
   (``patchelf --add-needed``) to load it, and a ``.pth`` line that makes the
   base environment's packages (torch, ...) importable, so no package is
   downloaded or rebuilt;
3. a check that ``Runtime.get().backend_registry.is_available("VulkanBackend")``
   is true in that venv (without a registered backend the build fails).

``--tracer on|off`` compiles the Vulkan backend with or without
``ET_EVENT_TRACER_ENABLED`` (with it, every dispatch takes 2 of the
QueryPool's 4096 timestamps, which caps a delegate near 2000 dispatches).
The core (``libexecutorch.so``) stays the wheel's, which is built with the
tracer ON; only the Vulkan backend's hooks change.

The check also executes a small CPU program: the wheel's ``_C`` inlines
torch's ``TensorImpl``, so it only executes with the torch it was built with
(executorch 1.5.1: torch 2.13.0; with torch 2.11 every execute fails with
"tensor does not have a device"). ``--extra-site DIR`` puts a site dir holding
that torch ahead of this environment on the venv's path.

``--prebuilt-lib LIB`` skips the compile and only makes the venv around a
library built before (for the same wheel): what a machine without network or
compiler needs. ``--base-package DIR`` overlays an executorch package other
than the importable one.

Needs ``patchelf`` (Debian: ``apt-get install patchelf``), checked before
anything is compiled. ``ccache`` is used when it is on ``PATH`` (the log says
which). A heartbeat line is printed at least
every ``--heartbeat`` seconds so asv's inactivity timeout never fires. The
checkout's torch pin (``torch_pin.py``) is reported next to the torch in use.

Entry point: :func:`build` with a :class:`FullBuild` (``vkbench build full ...``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import threading
import time
from pathlib import Path

from vkbench.build.glslc import ensure_glslc
from vkbench.build.glslc import version as glslc_version

VULKAN_SUBMODULES = (
    "backends/vulkan/third-party/Vulkan-Headers/include/vulkan/vulkan.h",
    "backends/vulkan/third-party/volk/volk.c",
    "backends/vulkan/third-party/VulkanMemoryAllocator/include/vk_mem_alloc.h",
)
LIB_NAME = "libexecutorch_backend_vulkan.so"
CHECK_SNIPPET = textwrap.dedent("""\
    import json, logging, executorch, executorch.version as v, torch
    logging.disable(logging.INFO)
    from executorch.runtime import Runtime
    r = Runtime.get().backend_registry
    info = {'vulkan': r.is_available('VulkanBackend'), 'backends': sorted(r.registered_backend_names),
            'executorch': v.__version__, 'git_version': v.git_version, 'torch': torch.__version__,
            'torch_file': torch.__file__, 'package': executorch.__path__[0]}
    # The runtime must also execute: _C inlines torch's TensorImpl, so a torch
    # other than the one the wheel was built with fails every execute
    # ("tensor does not have a device" for executorch 1.5.1 with torch 2.11).
    try:
        from executorch.exir import to_edge_transform_and_lower
        class M(torch.nn.Module):
            def forward(self, x):
                return x * 2.0 + 1.0
        x = torch.randn(1, 8)
        pte = to_edge_transform_and_lower(torch.export.export(M(), (x,))).to_executorch().buffer
        out = Runtime.get().load_program(pte).load_method('forward').execute([x])[0]
        info['portable_execute'] = 'ok' if torch.allclose(out, x * 2.0 + 1.0) else 'wrong result'
    except Exception as error:
        info['portable_execute'] = (type(error).__name__ + ': ' + str(error)).splitlines()[0]
    print(json.dumps(info))
""")


def log(message: str) -> None:
    print(f"[vkbench.build.full] {time.strftime('%H:%M:%S')} {message}", flush=True)


class BuildError(RuntimeError):
    pass


@dataclasses.dataclass(frozen=True)
class FullBuild:
    """What one ``full`` build makes, and how: every knob of ``vkbench build full``.

    One value rather than fifteen parameters, because the compile step, the
    venv step and the build record all read from the same set.
    """

    checkout: Path  # ExecuTorch source checkout (with the Vulkan submodules)
    out: Path  # the venv to create
    tracer: str = "on"  # "on" | "off": ET_EVENT_TRACER_ENABLED in the Vulkan backend
    build_dir: Path | None = None  # default: <out>/../build-<out name>
    jobs: int = dataclasses.field(default_factory=lambda: os.cpu_count() or 2)
    nice: int = 19  # niceness of the compile (0: none)
    glslc: str | None = None  # default: vkbench.build.glslc.ensure_glslc
    glslc_cache: Path | None = None
    flatc: str | None = None  # default: the wheel's data/bin/flatc
    extra_sites: tuple[Path, ...] = ()  # ahead of this env's site dir on the venv's path
    prebuilt_lib: Path | None = None  # skip the compile: make the venv around this library
    base_package: Path | None = None  # executorch package to overlay (default: the importable one)
    ccache: bool = True  # use ccache when it is on PATH
    heartbeat: float = 30.0  # max seconds without output
    record: Path | None = None  # write the build record (JSON) here


def run(
    command: list[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    heartbeat: float = 30.0,
    log_file: Path | None = None,
) -> None:
    """Run ``command`` streaming its output; print a heartbeat while it is quiet."""
    log("$ " + " ".join(str(c) for c in command))
    start = time.monotonic()
    last = [time.monotonic()]
    process = subprocess.Popen(
        [str(c) for c in command],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        bufsize=1,
    )
    done = threading.Event()

    def beat() -> None:
        while not done.wait(5.0):
            if time.monotonic() - last[0] >= heartbeat:
                log(f"... still running ({time.monotonic() - start:.0f}s): {Path(str(command[0])).name}")
                last[0] = time.monotonic()

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    tail: list[str] = []
    sink = open(log_file, "a") if log_file else None  # noqa: SIM115
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if sink:
                sink.write(line)
            tail = (tail + [line.rstrip()])[-40:]
            print(line, end="", flush=True)
            last[0] = time.monotonic()
        code = process.wait()
    finally:
        done.set()
        thread.join()
        if sink:
            sink.close()
    if code != 0:
        raise BuildError(f"exit {code}: {' '.join(map(str, command))}\n" + "\n".join(tail[-15:]))


def pinned_torch(text: str | None) -> dict[str, str | None]:
    """The torch an ExecuTorch tree pins, read from its ``torch_pin.py`` text (None: the file is absent)."""
    pin: dict[str, str | None] = {"torch_pin": None, "nightly_pin": None}
    for key, name in (("torch_pin", "TORCH_VERSION"), ("nightly_pin", "NIGHTLY_VERSION")):
        match = re.search(rf"^{name}\s*=\s*['\"]([^'\"]+)['\"]", text or "", re.M)
        pin[key] = match.group(1) if match else None
    return pin


def torch_pin(checkout: Path) -> dict[str, str | None]:
    """The checkout's torch pin (``torch_pin.py``) and the torch in use."""
    path = checkout / "torch_pin.py"
    pin = pinned_torch(path.read_text() if path.exists() else None)
    try:
        import torch

        pin["torch_installed"] = torch.__version__
    except Exception:  # noqa: BLE001
        pin["torch_installed"] = None
    return pin


def checkout_version(checkout: Path) -> str | None:
    path = checkout / "version.txt"
    return path.read_text().strip() if path.exists() else None


def installed_executorch() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        raise BuildError("executorch is not installed in this Python")
    return Path(list(spec.submodule_search_locations)[0])


def _flatc(package: Path, override: str | None) -> Path:
    for candidate in (override, package / "data/bin/flatc", shutil.which("flatc")):
        if candidate and Path(candidate).exists():
            return Path(candidate)
    raise BuildError("no flatc (the executorch wheel ships data/bin/flatc; or pass --flatc)")


def _et_root(checkout: Path, build_dir: Path) -> Path:
    """A path ending in ``executorch`` for ``#include <executorch/...>``."""
    if checkout.name == "executorch":
        return checkout
    link_parent = build_dir / "root"
    link_parent.mkdir(parents=True, exist_ok=True)
    link = link_parent / "executorch"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(checkout)
    return link


def overlay_cmakelists(et_root: Path, core_lib: Path, flatc: Path, tracer: bool, python: str) -> str:
    defines = ["C10_USING_CUSTOM_GENERATED_MACROS"] + (["ET_EVENT_TRACER_ENABLED"] if tracer else [])
    return textwrap.dedent(
        f"""\
        # Written by vkbench.build.full: ExecuTorch's backends/vulkan as a shared
        # library on top of an installed wheel's libexecutorch.so.
        cmake_minimum_required(VERSION 3.19)
        project(vkbench_vulkan_overlay C CXX)
        set(CMAKE_CXX_STANDARD 17)
        set(CMAKE_CXX_STANDARD_REQUIRED ON)
        set(CMAKE_POSITION_INDEPENDENT_CODE ON)
        set(BUILD_SHARED_LIBS ON)
        set(EXECUTORCH_ROOT "{et_root}")
        set(PYTHON_EXECUTABLE "{python}")
        set(EXECUTORCH_BUILD_VULKAN ON)
        set(_vulkan_schema__srcs backends/vulkan/serialization/schema.fbs)
        add_library(executorch_core SHARED IMPORTED GLOBAL)
        set_target_properties(executorch_core PROPERTIES
          IMPORTED_LOCATION "{core_lib}"
          INTERFACE_COMPILE_DEFINITIONS "{";".join(defines)}")
        add_executable(flatc IMPORTED GLOBAL)
        set_target_properties(flatc PROPERTIES IMPORTED_LOCATION "{flatc}")
        add_subdirectory("{et_root}/backends/vulkan" vulkan)
        # EXECUTORCH_ROOT may be a symlink named executorch; "<it>/.." would
        # resolve through the link, so put its own parent first.
        target_include_directories(vulkan_backend BEFORE PRIVATE "{et_root.parent}"
          "{et_root}/runtime/core/portable_type/c10")
        # The 1.5 wheel's _C exports its own volk (volkInitialize, ...): without
        # -Bsymbolic our volkInitialize call binds to _C's copy, which fills
        # _C's function pointers and leaves ours NULL (SIGSEGV in vkapi::Runtime).
        target_link_options(vulkan_backend PRIVATE "LINKER:-Bsymbolic")
        set_target_properties(vulkan_backend PROPERTIES
          OUTPUT_NAME executorch_backend_vulkan
          BUILD_RPATH "$ORIGIN" INSTALL_RPATH "$ORIGIN")
        """
    )


def build_overlay(options: FullBuild, checkout: Path, glslc: Path) -> Path:
    missing = [p for p in VULKAN_SUBMODULES if not (checkout / p).exists()]
    if missing:
        raise BuildError("Vulkan submodules missing in the checkout: " + ", ".join(missing))
    if not (checkout / "third-party/flatbuffers/include/flatbuffers/flatbuffers.h").exists():
        raise BuildError("third-party/flatbuffers (headers) missing in the checkout")
    package = options.base_package or installed_executorch()
    core_lib = package / "lib/libexecutorch.so"
    if not core_lib.exists():
        raise BuildError(f"{core_lib} missing: overlay mode needs a wheel with a shared core (>= 1.5)")
    build_dir = options.build_dir or (options.out.parent / f"build-{options.out.name}")
    build_dir.mkdir(parents=True, exist_ok=True)
    source_dir = build_dir / "overlay-src"
    source_dir.mkdir(exist_ok=True)
    et_root = _et_root(checkout, build_dir)
    (source_dir / "CMakeLists.txt").write_text(
        overlay_cmakelists(
            et_root, core_lib, _flatc(package, options.flatc), options.tracer == "on", sys.executable
        )
    )
    env = dict(os.environ)
    env["PATH"] = f"{glslc.parent}{os.pathsep}{env.get('PATH', '')}"
    cmake = [
        "cmake",
        "-S",
        source_dir,
        "-B",
        build_dir / "cmake",
        "-G",
        "Ninja",
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DGLSLC_PATH={glslc}",
        f"-DEXECUTORCH_VULKAN_SHADER_COMPILE_NTHREADS={options.jobs}",
    ]
    if shutil.which("ccache") and options.ccache:
        cmake += ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
        log("ccache: on")
    else:
        why = ("--no-ccache" if not options.ccache else "not on PATH: apt-get install ccache")
        log(f"ccache: off ({why})")
    nice = ["nice", "-n", str(options.nice)] if options.nice else []
    log_file = build_dir / "build.log"
    run(cmake, env=env, heartbeat=options.heartbeat, log_file=log_file)
    run(
        nice + ["cmake", "--build", build_dir / "cmake", "--target", "vulkan_backend",
                "-j", str(options.jobs)],
        env=env,
        heartbeat=options.heartbeat,
        log_file=log_file,
    )
    lib = build_dir / "cmake/vulkan" / LIB_NAME
    if not lib.exists():
        raise BuildError(f"{lib} was not produced")
    return lib


def make_venv(out: Path, package: Path, lib: Path, extra_sites: list[Path] | None = None) -> Path:
    """A venv with a patched copy of ``executorch`` and the base env on a .pth.

    ``extra_sites`` (e.g. a site dir holding the torch the wheel was built
    with) go on the .pth ahead of the base environment.
    """
    if out.exists():
        shutil.rmtree(out)
    base_python = getattr(sys, "_base_executable", sys.executable)
    run([base_python, "-m", "venv", "--without-pip", out])
    python = out / "bin/python"
    purelib = Path(
        subprocess.check_output(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    # Packages of the environment we were run from (torch, numpy, ...) come after ours.
    sites = [str(Path(p).absolute()) for p in (extra_sites or [])] + [sysconfig.get_paths()["purelib"]]
    (purelib / "vkbench-base-env.pth").write_text("\n".join(sites) + "\n")
    target = purelib / "executorch"
    log(f"copy {package} -> {target}")
    shutil.copytree(package, target, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(lib, target / "lib" / LIB_NAME)
    for ext in sorted((target / "extension/pybindings").glob("_C*.so")):
        needed = subprocess.check_output(["patchelf", "--print-needed", ext], text=True).split()
        if LIB_NAME not in needed:
            run(["patchelf", "--add-needed", LIB_NAME, ext])
    return python


def verify(python: Path) -> dict:
    """Import the built runtime in ``python``; fail unless VulkanBackend is registered."""
    result = subprocess.run(
        [python, "-c", CHECK_SNIPPET], capture_output=True, text=True, cwd="/", timeout=600
    )
    line = (result.stdout.strip().splitlines() or [""])[-1]
    try:
        info = json.loads(line)
    except json.JSONDecodeError as error:
        raise BuildError(f"check failed (exit {result.returncode}):\n{result.stderr[-3000:]}") from error
    if not info.get("vulkan"):
        raise BuildError(f"VulkanBackend is not registered in the built runtime: {info}")
    if info.get("portable_execute") != "ok":
        log(
            f"WARNING: the runtime registers VulkanBackend but cannot execute a CPU program with torch "
            f"{info.get('torch')}: {info.get('portable_execute')}. Use the torch the executorch wheel was "
            "built with (executorch 1.5.1: torch 2.13.0) via --extra-site."
        )
    return info


def build(options: FullBuild) -> int:
    """Build, make the venv, check it; print the record. 0, or 1 after one FAILED line.

    The record (``options.record``) is written in every case, failure
    included, so asv's build log and the record say the same thing.
    """
    # cmake and the shader generator run in other folders: every path they get must be absolute
    options = dataclasses.replace(
        options, out=options.out.absolute(),
        build_dir=options.build_dir.absolute() if options.build_dir else None,
        glslc_cache=options.glslc_cache.absolute() if options.glslc_cache else None)
    checkout = options.checkout.resolve()
    start = time.monotonic()
    record: dict = {
        "tracer": options.tracer,
        "checkout": str(checkout),
        "checkout_version": checkout_version(checkout),
        **torch_pin(checkout),
    }
    log(
        f"checkout {checkout} (version.txt {record['checkout_version']}); "
        f"torch pin {record['torch_pin']}, torch in use {record['torch_installed']}"
    )
    if (
        record["torch_pin"]
        and record["torch_installed"]
        and not record["torch_installed"].startswith(record["torch_pin"])
    ):
        log("note: the checkout pins a different torch than the one in use")
    try:
        if not shutil.which("patchelf"):
            raise BuildError("patchelf not found: the overlay adds the Vulkan library to the wheel's _C "
                             "with it (Debian: apt-get install patchelf)")
        if options.prebuilt_lib:
            # No compile: a library built elsewhere (same wheel, same tracer setting).
            lib = options.prebuilt_lib.resolve()
            record["library"] = str(lib)
            python = make_venv(options.out, options.base_package or installed_executorch(), lib,
                               list(options.extra_sites))
            record["python"] = str(python)
            record["check"] = verify(python)
            return _done(record, options, start)
        glslc = (Path(options.glslc) if options.glslc else ensure_glslc(options.glslc_cache)).absolute()
        record["glslc"] = f"{glslc} ({glslc_version(glslc)})"
        log(f"glslc: {record['glslc']}")
        lib = build_overlay(options, checkout, glslc)
        record["library"] = str(lib)
        python = make_venv(options.out, options.base_package or installed_executorch(), lib,
                           list(options.extra_sites))
        record["python"] = str(python)
        record["check"] = verify(python)
    except BuildError as error:
        record["error"] = str(error)
        log(f"FAILED: {error}")
        _save(record, options, start)
        return 1
    except BaseException:
        _save(record, options, start)
        raise
    return _done(record, options, start)


def _save(record: dict, options: FullBuild, start: float) -> None:
    record["seconds"] = round(time.monotonic() - start, 1)
    if options.record:
        options.record.write_text(json.dumps(record, indent=2) + "\n")


def _done(record: dict, options: FullBuild, start: float) -> int:
    _save(record, options, start)
    check = record["check"]
    log(f"ok in {record['seconds']}s: {record['python']} registers VulkanBackend")
    log(f"backends: {check['backends']}; portable execute: {check.get('portable_execute')}")
    print(json.dumps(record, indent=2), flush=True)
    return 0

