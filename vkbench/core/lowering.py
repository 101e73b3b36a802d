"""The one lowering path: ``torch.export`` -> edge -> Vulkan -> ExecuTorch.

CLI, asv benchmarks and tests all call :func:`lower`, so a number in the
site, a line in the terminal and an assertion in a test describe the same
computation. The record says how much the Vulkan backend took, what it left
on the CPU and why (the partitioner's own reasons), and where the time went.

The same path can target XNNPACK or no delegate at all (``backend=``), so a
runtime comparison of Vulkan against the CPU backends runs the *same*
exported program through the same stages, not a second lowering recipe.

``partition_only=True`` stops the same path after the partitioner: the
backend's ``preprocess`` (code generation, ~3 s per Vulkan delegate) is
replaced by an empty payload, so the coverage counts cost only ``to_edge`` and
``partition``. That is what the cheap *gate* tier measures per commit; the
standard tier's full lowering checks that preprocess really succeeds.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
import time
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from vkbench.core.compat import require, safe_import
from vkbench.core.failures import child_stderr_captured, first_error_line
from vkbench.core.phases import FUSABLE, PARTITIONER_PHASES, PROPOSE, SUPPORT, PhaseClock, clock_name, patched
from vkbench.core.reasons import SkipReasons, op_name, recording_skip_reasons
from vkbench.core.rss import PeakRSS

_exir = safe_import("executorch.exir")
_vk_partitioner = safe_import("executorch.backends.vulkan.partitioner.vulkan_partitioner")
_vk_patterns = safe_import("executorch.backends.vulkan.patterns")
_vk_preprocess = safe_import("executorch.backends.vulkan.vulkan_preprocess")
_fx_partitioner = safe_import("torch.fx.passes.infra.partitioner")
_xnn_partitioner = safe_import("executorch.backends.xnnpack.partition.xnnpack_partitioner")
_xnn_preprocess = safe_import("executorch.backends.xnnpack.xnnpack_preprocess")
_backend_details = safe_import("executorch.exir.backend.backend_details")

#: Targets of :func:`lower`: the Vulkan delegate (the project's subject), the
#: XNNPACK CPU delegate, and ``portable`` (no delegate: ExecuTorch's portable kernels).
BACKENDS = ("vulkan", "xnnpack", "portable")
#: Reason given to every CPU node of a ``portable`` lowering (there is no partitioner to ask).
NO_PARTITIONER = "no partitioner (portable)"
_PARTITIONER_MODULES = {"vulkan": _vk_partitioner, "xnnpack": _xnn_partitioner}

#: Stages of a lowering, in order; a failure names the stage it happened in.
STAGES = ("export", "to_edge", "partition", "preprocess", "to_executorch")
#: Call targets that are plumbing, not computation left on the CPU.
_NOT_COMPUTE = {"executorch_call_delegate", "getitem"}
#: Attribute set on an exception by the stage (partition/preprocess) it escaped from.
_STAGE_ATTR = "_vkbench_stage"


_NON_CORE = re.compile(r"Operator torch\._ops\.(\w+)\.(\w+)\.(\w+) is not in Core ATen opset")


def non_core_op(error: LoweringError) -> str | None:
    """``aten.multinomial.default`` when ``to_edge`` refused that op for not being Core ATen."""
    match = _NON_CORE.search(error.first_line) if error.stage == "to_edge" else None
    return ".".join(match.groups()) if match else None


def op_overload(name: str) -> Any:
    """``torch.ops.aten.multinomial.default`` from ``aten.multinomial.default``."""
    namespace, op, overload = name.split(".")
    return getattr(getattr(getattr(torch.ops, namespace), op), overload)


class LoweringError(RuntimeError):
    """A lowering failed; ``stage`` says where, the cause is chained."""

    def __init__(self, stage: str, error: BaseException) -> None:
        first_line = first_error_line(error)
        super().__init__(f"{stage}: {type(error).__name__}: {first_line}")
        self.stage = stage
        self.error_type = type(error).__name__
        self.first_line = first_line


@dataclass
class CpuNode:
    """One node left on the CPU and the partitioner's reasons for it."""

    node: str
    op: str
    reasons: list[str]


@dataclass
class Coverage:
    """What the Vulkan backend took from one program, and at what cost.

    For a non-Vulkan :func:`lower` the same fields describe that backend:
    ``vulkan_programs`` counts its delegate calls (0 for ``portable``).
    """

    vulkan_programs: int = 0
    nodes_total: int = 0
    nodes_delegated: int = 0
    nodes_cpu: int = 0
    cpu_ops: dict[str, int] = field(default_factory=dict)
    cpu_nodes: list[CpuNode] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    partition_phases: dict[str, float] = field(default_factory=dict)
    preprocess_calls: int = 0
    peak_rss_mb: float = 0.0
    #: Peak RSS during the lowering minus RSS when it started (after a heap trim), MiB.
    added_rss_mb: float = 0.0
    program_bytes: int | None = None
    #: True when preprocess was skipped (:func:`lower` ``partition_only``): counts only.
    partition_only: bool = False
    #: Unique operator types among the compute nodes, delegated or not (pytorch/executorch#12495).
    op_types_total: int = 0
    #: Delegated compute nodes per operator type.
    delegated_ops: dict[str, int] = field(default_factory=dict)
    #: ExecuTorch's own count (``get_delegation_info(...).num_delegated_nodes``): every
    #: ``call_function`` node inside the delegates, ``getitem`` included. What ExecuTorch's backend
    #: tester reports, so a reader can check vkbench against it; None where this ExecuTorch lacks
    #: ``executorch.devtools.backend_debug.get_delegation_info``.
    et_delegated_nodes: int | None = None
    #: ExecuTorch's ``num_non_delegated_nodes``: every ``call_function`` node outside the delegates
    #: except the delegate calls themselves, so ``getitem`` counts as a CPU node (vkbench's does not).
    et_non_delegated_nodes: int | None = None

    @property
    def cpu_percent(self) -> float:
        """Share of compute nodes left on the CPU (lower is better)."""
        return 100.0 * self.nodes_cpu / self.nodes_total if self.nodes_total else 0.0

    @property
    def cpu_op_type_percent(self) -> float:
        """Share of the graph's unique operator types with a node left on the CPU (lower is better)."""
        return 100.0 * len(self.cpu_ops) / self.op_types_total if self.op_types_total else 0.0

    @property
    def cpu_op_names(self) -> list[str]:
        return sorted(self.cpu_ops)

    def reasons_by_op(self) -> dict[str, dict[str, int]]:
        """``op -> reason -> node count`` over the CPU nodes."""
        table: dict[str, Counter[str]] = {}
        for cpu in self.cpu_nodes:
            for reason in cpu.reasons:
                table.setdefault(cpu.op, Counter())[reason] += 1
        return {op: dict(counts) for op, counts in sorted(table.items())}

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["cpu_percent"] = round(self.cpu_percent, 3)
        data["cpu_op_type_percent"] = round(self.cpu_op_type_percent, 3)
        data["reasons_by_op"] = self.reasons_by_op()
        return data


def _export(module: torch.nn.Module, example_inputs: tuple[Any, ...]) -> Any:
    return torch.export.export(module.eval(), tuple(example_inputs), strict=False)


def export_program(module: torch.nn.Module, example_inputs: Sequence[Any]) -> Any:
    """``torch.export`` a module in eval mode (non-strict, like the seed's default)."""
    try:
        with torch.no_grad():
            return _export(module, tuple(example_inputs))
    except Exception as error:
        raise LoweringError("export", error) from error


def edge_op(name: str) -> Any:
    """The edge-dialect operator of a name the counts use (``aten.add.Tensor``)."""
    from executorch.exir.dialects._ops import ops as exir_ops

    return functools.reduce(getattr, name.split("."), exir_ops.edge)


def make_partitioner(options: dict[str, Any] | None = None,
                     delegate_only: Collection[str] | None = None) -> Any:
    """A ``VulkanPartitioner`` with ``options`` as its compile options.

    ``delegate_only`` (op names) becomes its ``operator_allowlist``: only those
    operator types may be delegated (:mod:`vkbench.execution.culprit` narrows
    a runtime failure down to them).
    """
    module = require(_vk_partitioner)
    allowlist = None if delegate_only is None else [edge_op(name) for name in delegate_only]
    return module.VulkanPartitioner(dict(options) if options else None, operator_allowlist=allowlist)


def _partitioners(backend: str, options: dict[str, Any] | None,
                  delegate_only: Collection[str] | None = None) -> list[Any]:
    """The partitioner list ``to_edge_transform_and_lower`` gets for ``backend``."""
    if backend == "vulkan":
        return [make_partitioner(options, delegate_only)]
    if backend == "xnnpack":
        return [require(_xnn_partitioner).XnnpackPartitioner(**(options or {}))]
    return []


def _attr(module: Any, name: str) -> Any:
    """``module.name``, or None when the module (a :class:`Missing`) or the name is absent."""
    return getattr(module, name, None) if module else None


def _skip_codegen(original: Any) -> Any:
    """A ``preprocess`` that returns an empty payload: the partition is kept, no code is generated."""

    def preprocess(*args: Any, **kwargs: Any) -> Any:
        return require(_backend_details).PreprocessResult(processed_bytes=b"")

    return preprocess


@contextlib.contextmanager
def _instrumented(
    clock: PhaseClock,
    supported: dict[str, bool],
    where: list[str],
    backend: str = "vulkan",
    partition_only: bool = False,
) -> Iterator[None]:
    """Time the partitioner's phases and preprocess; track the active stage.

    Only ``backend``'s partitioner and preprocess are wrapped: a lowering for
    XNNPACK must not need (or time) the Vulkan modules, and vice versa.
    ``partition_only`` replaces the preprocess by :func:`_skip_codegen`.
    """
    vulkan = backend == "vulkan"
    if vulkan:
        partitioner_cls = getattr(_vk_partitioner, "VulkanPartitioner", None)
        operators_cls = getattr(_vk_partitioner, "VulkanSupportedOperators", None)
        backend_cls = getattr(_vk_preprocess, "VulkanBackend", None)
    elif backend == "xnnpack":
        partitioner_cls = _attr(_xnn_partitioner, "XnnpackPartitioner")
        operators_cls = None
        backend_cls = _attr(_xnn_preprocess, "XnnpackBackend")
    else:
        partitioner_cls = operators_cls = backend_cls = None
    fx_cls = _attr(_fx_partitioner, "CapabilityBasedPartitioner")

    def staged(stage: str):
        def replace(original):
            def run(*args: Any, **kwargs: Any) -> Any:
                where.append(stage)
                try:
                    with clock.phase(stage):
                        return original(*args, **kwargs)
                except Exception as error:
                    # The innermost stage that saw the exception owns it.
                    if not hasattr(error, _STAGE_ATTR):
                        setattr(error, _STAGE_ATTR, stage)
                    raise
                finally:
                    where.pop()

            return run

        return replace

    def timed(name: str):
        return lambda original: clock.wrap(name, original)

    def checked(original):
        def is_node_supported(self, submodules, node):
            with clock.phase(clock_name(SUPPORT)):
                result = original(self, submodules, node)
            supported[node.name] = bool(result)
            return result

        return is_node_supported

    with contextlib.ExitStack() as stack:
        stack.enter_context(patched(partitioner_cls, "partition", staged("partition")))
        if partition_only:
            stack.enter_context(patched(backend_cls, "preprocess", _skip_codegen))
        else:
            stack.enter_context(patched(backend_cls, "preprocess", staged("preprocess")))
        stack.enter_context(
            patched(
                (_vk_patterns or None) if vulkan else None,
                "get_all_fusable_subgraphs",
                timed(clock_name(FUSABLE)),
            )
        )
        stack.enter_context(patched(fx_cls, "propose_partitions", timed(clock_name(PROPOSE))))
        stack.enter_context(patched(operators_cls, "is_node_supported", checked))
        for name, entry in sorted(_pattern_registry().items()) if vulkan else ():
            stack.enter_context(patched(entry, "get_graphs_fn", timed(PATTERN_GRAPHS + name)))
        matcher = getattr(_vk_patterns, "SubgraphMatcher", None) if vulkan else None
        stack.enter_context(patched(matcher, "__init__", timed(PATTERN_GRAPHS + MATCHING)))
        stack.enter_context(patched(matcher, "match", timed(PATTERN_GRAPHS + MATCHING)))
        yield


#: Phase prefix of the registered graph patterns' own work inside ``fusable_patterns`` (sub-phases):
#: building each pattern's graphs (one sub-phase per pattern) and matching them all (:data:`MATCHING`).
PATTERN_GRAPHS = "partition.pattern_graphs:"
#: The sub-phase of matching every pattern graph against the partitioned graph (torch.fx's matcher).
MATCHING = "(matching)"


def _pattern_registry() -> dict[str, Any]:
    """ExecuTorch's Vulkan pattern registry (``name -> entry``) where the commit has one with graphs:
    each entry's ``get_graphs_fn`` is timed as a sub-phase of ``fusable_patterns``, so what building
    and matching the graph patterns costs (and what a new pattern adds) is told apart from the rest."""
    registry = getattr(_vk_patterns, "fusable_patterns", None)
    if not isinstance(registry, dict):
        return {}
    return {str(name): entry for name, entry in registry.items()
            if getattr(entry, "get_graphs_fn", None) is not None}


def _delegated_nodes(graph_module: torch.fx.GraphModule) -> Counter[str]:
    """Compute nodes inside the lowered Vulkan modules of ``graph_module``, per op type."""
    names: Counter[str] = Counter()
    for node in graph_module.graph.nodes:
        if node.op != "get_attr":
            continue
        lowered = getattr(graph_module, str(node.target), None)
        original = getattr(lowered, "original_module", None)
        if original is None:
            continue
        inner = original.graph_module if hasattr(original, "graph_module") else original
        for n in inner.graph.nodes:
            if n.op == "call_function" and op_name(n.target) not in _NOT_COMPUTE:
                names[op_name(n.target)] += 1
    return names


@functools.cache
def _backend_debug() -> Any:
    """``executorch.devtools.backend_debug`` or a :class:`~vkbench.core.compat.Missing`.

    Imported on the first count, not with this module: it pulls in the devtools inspector
    (~0.5 s) that commands which never lower should not pay for.
    """
    return safe_import("executorch.devtools.backend_debug")


def et_delegation_counts(graph_module: torch.fx.GraphModule) -> tuple[int | None, int | None]:
    """``(num_delegated_nodes, num_non_delegated_nodes)`` of ExecuTorch's ``get_delegation_info``.

    ExecuTorch's definition, kept beside vkbench's (:func:`_count`) so the site can show the share
    its own tools report. ``(None, None)`` at a commit without the function, or whose version of
    it fails on this graph (asv then skips those two tracks): a devtools helper must not cost
    the record its own counts.
    """
    get_delegation_info = _attr(_backend_debug(), "get_delegation_info")
    if get_delegation_info is None:
        return None, None
    try:
        info = get_delegation_info(graph_module)
        return int(info.num_delegated_nodes), int(info.num_non_delegated_nodes)
    except Exception:  # noqa: BLE001 - an old helper's failure means "no ExecuTorch count here"
        return None, None


def _count(
    edge_program: Any,
    reasons: SkipReasons,
    supported: dict[str, bool],
    record: Coverage,
    fixed_reason: str | None = None,
) -> None:
    graph_module = edge_program.graph_module
    cpu_ops: Counter[str] = Counter()
    for node in graph_module.graph.nodes:
        if node.op != "call_function":
            continue
        name = op_name(node.target)
        if name == "executorch_call_delegate":
            record.vulkan_programs += 1
        elif name not in _NOT_COMPUTE:
            cpu_ops[name] += 1
            why = (
                [fixed_reason]
                if fixed_reason
                else reasons.for_node(node.name, name, supported.get(node.name))
            )
            record.cpu_nodes.append(CpuNode(node.name, name, why))
    record.cpu_ops = dict(sorted(cpu_ops.items()))
    record.nodes_cpu = sum(cpu_ops.values())
    record.delegated_ops = dict(sorted(_delegated_nodes(graph_module).items()))
    record.nodes_delegated = sum(record.delegated_ops.values())
    record.nodes_total = record.nodes_cpu + record.nodes_delegated
    record.op_types_total = len(set(record.delegated_ops) | set(cpu_ops))
    record.et_delegated_nodes, record.et_non_delegated_nodes = et_delegation_counts(graph_module)


def lower(
    module: torch.nn.Module | None,
    example_inputs: Sequence[Any],
    *,
    exported: Any = None,
    partitioner_options: dict[str, Any] | None = None,
    to_executorch: bool = True,
    keep_program: bool = False,
    backend: str = "vulkan",
    partition_only: bool = False,
    allow_on_cpu: Sequence[str] = (),
    delegate_only: Collection[str] | None = None,
) -> tuple[Coverage, Any]:
    """Lower ``module`` with the Vulkan partitioner and describe the result.

    Pass ``exported`` (a ``torch.export.ExportedProgram``) to skip export, as
    benchmarks do to time lowering alone. Returns ``(coverage, program)``
    where ``program`` is the ExecuTorch program manager when ``keep_program``
    (else ``None``). Raises :class:`LoweringError` naming the failed stage.

    ``backend`` (one of :data:`BACKENDS`) picks the target: ``vulkan`` (the
    default), ``xnnpack`` (``XnnpackPartitioner``; ``partitioner_options``
    are its keyword arguments) or ``portable`` (plain ``to_edge``, nothing
    delegated, every compute node counted as CPU). A backend whose modules
    this executorch lacks raises ``NotImplementedError`` (asv's skip).

    ``partition_only`` skips code generation (see the module docstring):
    the counts are the partitioner's, and no ExecuTorch program is made.
    A child process that fails inside the lowering (``flatc``) puts its own
    first error line into the :class:`LoweringError`.

    ``allow_on_cpu`` names ops outside the Core ATen opset (``aten.multinomial.default``)
    that ``to_edge`` should let through, as a user would with ExecuTorch's
    ``EdgeCompileConfig(_core_aten_ops_exception_list=...)``; they stay on the CPU.
    ``delegate_only`` (Vulkan only) names the operator types the partitioner may take.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose from {', '.join(BACKENDS)}")
    if backend == "portable" and partitioner_options:
        raise ValueError("the portable backend has no partitioner to take partitioner_options")
    if delegate_only is not None and backend != "vulkan":
        raise ValueError("delegate_only is the Vulkan partitioner's operator allowlist")
    if partition_only and (backend == "portable" or to_executorch or keep_program):
        raise ValueError("partition_only needs a partitioner and makes no program (to_executorch=False)")
    exir = require(_exir)
    require(_PARTITIONER_MODULES.get(backend, _exir))  # before exporting: skip fast when it is missing
    record = Coverage(partition_only=partition_only)
    clock = PhaseClock()
    supported: dict[str, bool] = {}
    where: list[str] = []
    program = None
    with PeakRSS() as rss, child_stderr_captured():
        if exported is None:
            start = time.perf_counter()
            exported = export_program(module, example_inputs)  # type: ignore[arg-type]
            record.seconds["export"] = time.perf_counter() - start
        else:
            record.seconds["export"] = 0.0
        operators_cls = (
            getattr(_vk_partitioner, "VulkanSupportedOperators", None) if backend == "vulkan" else None
        )
        with (
            recording_skip_reasons(operators_cls) as reasons,
            _instrumented(clock, supported, where, backend, partition_only),
        ):
            start = time.perf_counter()
            try:
                config = exir.EdgeCompileConfig(_core_aten_ops_exception_list=[op_overload(name)
                                                                                for name in allow_on_cpu])
                if backend == "portable":
                    edge = exir.to_edge(exported, compile_config=config)
                else:
                    edge = exir.to_edge_transform_and_lower(
                        exported, partitioner=_partitioners(backend, partitioner_options, delegate_only),
                        compile_config=config,
                    )
            except Exception as error:
                raise LoweringError(getattr(error, _STAGE_ATTR, "to_edge"), error) from error
            lowered_s = time.perf_counter() - start
        fixed = NO_PARTITIONER if backend == "portable" else None
        _count(edge.exported_program(), reasons, supported, record, fixed)
        if to_executorch:
            start = time.perf_counter()
            try:
                program = edge.to_executorch()
                record.program_bytes = len(program.buffer)
            except Exception as error:
                raise LoweringError("to_executorch", error) from error
            record.seconds["to_executorch"] = time.perf_counter() - start
    partition_s = sum(s for name, s in clock.seconds.items() if name.startswith("partition"))
    preprocess_s = clock.seconds.get("preprocess", 0.0)
    record.seconds["partition"] = partition_s
    record.seconds["preprocess"] = preprocess_s
    record.seconds["to_edge"] = max(0.0, lowered_s - partition_s - preprocess_s)
    record.seconds = {stage: round(record.seconds.get(stage, 0.0), 4) for stage in STAGES}
    record.partition_phases = partition_phases(clock)
    record.preprocess_calls = clock.calls.get("preprocess", 0)
    record.peak_rss_mb = round(rss.peak_mb, 1)
    record.added_rss_mb = round(rss.added_mb, 1)
    return record, (program if keep_program else None)


#: Most non-Core-ATen ops :func:`lower_allowing_non_core` lets through before it gives up.
MAX_ALLOWED_ON_CPU = 4


@dataclass
class NonCoreRetry:
    """What :func:`lower_allowing_non_core` did: the ops it let through, and the errors it met."""

    allowed: list[str]
    #: The default config's error (None: the default config lowered).
    default_error: LoweringError | None
    #: The last error when still blocked with ``allowed`` on the CPU (None: it lowered).
    last_error: LoweringError | None


def fresh_copy(exported: Any) -> Any:
    """A clean copy of an ``ExportedProgram``, saved and loaded in memory.

    A second ``to_edge`` of one ``ExportedProgram`` can fail on the unbacked
    symbols the first left pending on its shape env
    (``PendingUnbackedSymbolNotFound``; bug row ``to_edge_pending_unbacked_retry``);
    a copy lowers as the first lowering did, without building or exporting again.
    """
    buffer = io.BytesIO()
    torch.export.save(exported, buffer)
    buffer.seek(0)
    return torch.export.load(buffer)


def lower_allowing_non_core(
    module: torch.nn.Module | None, example_inputs: Sequence[Any], **options: Any
) -> tuple[Coverage | None, Any, NonCoreRetry]:
    """:func:`lower`, letting each op ``to_edge`` refuses as non-Core-ATen through to the CPU.

    That is what a user does with ExecuTorch's edge compile config, and then
    the rest of the graph gets its answer. Returns ``(coverage or None,
    program or None, retry)``; other lowering errors end the retries.
    Every retry lowers a program of its own (:func:`fresh_copy` of ``exported=``,
    or a new export of ``module``): the failure a reused program meets is
    ExecuTorch's to fix, not the policy's blocker.
    """
    allowed: list[str] = []
    default_error: LoweringError | None = None
    exported = options.get("exported")
    while True:
        if allowed and exported is not None:
            options["exported"] = fresh_copy(exported)
        try:
            coverage, program = lower(module, example_inputs, allow_on_cpu=allowed, **options)
            return coverage, program, NonCoreRetry(allowed, default_error, None)
        except LoweringError as error:
            default_error = default_error or error
            op = non_core_op(error)
            if op is None or op in allowed or len(allowed) >= MAX_ALLOWED_ON_CPU:
                return None, None, NonCoreRetry(allowed, default_error, error)
            allowed.append(op)


def partition_phases(clock: PhaseClock) -> dict[str, float]:
    """Exclusive seconds per partition phase; ``other`` is the partitioner's own glue.
    ``fusable_patterns`` includes its sub-phases (:func:`pattern_graph_phases`)."""
    names = {**{clock_name(phase): phase for phase in PARTITIONER_PHASES}, "partition": "other"}
    phases = {short: clock.seconds.get(long, 0.0) for long, short in names.items()}
    phases[FUSABLE] += sum(pattern_graph_phases(clock).values())
    return {short: round(value, 4) for short, value in phases.items()}


def pattern_graph_phases(clock: PhaseClock) -> dict[str, float]:
    """``pattern name -> exclusive reading`` of building each registered pattern's graphs, and
    :data:`MATCHING` of matching them all."""
    return {long.removeprefix(PATTERN_GRAPHS): value for long, value in sorted(clock.seconds.items())
            if long.startswith(PATTERN_GRAPHS)}


def timed_partition(
    edge_program: Any, partitioner_options: dict[str, Any] | None = None, clock: PhaseClock | None = None
) -> tuple[int, dict[str, float]]:
    """Run ``VulkanPartitioner.partition`` alone on an edge program.

    Returns the number of partitions and the phase split (plus ``total``).
    This is the seed's measurement: the edge program is built beforehand.
    ``clock`` (wall seconds when None) is what the phases are measured in.
    """
    clock = clock or PhaseClock()
    supported: dict[str, bool] = {}
    operators_cls = getattr(_vk_partitioner, "VulkanSupportedOperators", None)
    with recording_skip_reasons(operators_cls), _instrumented(clock, supported, []):
        result = make_partitioner(partitioner_options).partition(edge_program)
    phases = partition_phases(clock)
    phases["total"] = round(sum(phases.values()), 4)
    return len(result.partition_tags), phases
