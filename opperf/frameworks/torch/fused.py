"""PyTorch's fused patterns: one ``nn.Module`` per pattern in eval mode, run eagerly (``unfused``),
layer by layer (``parts``), traced (``graph``: ``torch.jit.trace``, not frozen), compiled
(``compile``: ``torch.compile`` with inductor's default settings, ``inductor``, or with its freezing,
``inductor-freezing``), or fused by a module-level backend (``fused``:
``torch.ao.quantization.fuse_modules`` over the pattern's modules, as a user would list them;
``freeze``: ``torch.jit.freeze`` of the trace, which folds BatchNorm into the convolution).

Each variant's outputs are checked against the unfused module's (``fuse_modules`` of conv, bn and relu
in the residual pattern moves the ReLU before the addition, which the check catches), and each
carries its graph as proof: the leaf modules (``ao``), the frozen graph's aten nodes (``freeze``), or
the kernels inductor's generated code calls (``inductor``: on CPU it keeps the convolution an extern
kernel unless freezing is on, and fuses what follows it; with freezing, BatchNorm folds into the
weights and the convolution becomes an MKL-DNN kernel with the ReLU as its epilogue).

Inductor's code is read from the ``output_code.py`` its trace option writes (what
``TORCH_COMPILE_DEBUG=1`` turns on) into a folder of opperf's, with inductor's FX graph cache off for
that compile, since a cache hit generates (and traces) nothing; the compile is a cold one, as every
``compile_s`` is. Kernels are named after the aten operators they compute (``cpp.descriptive_names``
set to ``original_aten``), which is what the proof reads. No code, or no kernel in it, is a
``SkipError`` "cannot prove fusion", never a silent "not fused".
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import functools
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opperf.frameworks.torch.calls import Call
from opperf.frameworks.torch.errors import describe_error
from opperf.frameworks.torch.stages import warm_up_compiler
from opperf.measure.harness import SkipError
from opperf.measure.stages import StageCheck, compare
from opperf.operators import fused
from opperf.results.measurement import BenchmarkSpec, TensorSpec

FREEZING_BACKWARD = (
    "inductor's freezing is inference only: it folds the weights into constants when compiling "
    "without autograd, and a graph recorded for backward compiles unfrozen"
)


VARIANTS: tuple[fused.Variant, ...] = (
    fused.Variant("torch", "eager", "unfused", "the nn.Module in eval mode"),
    fused.Variant("torch", "eager", "parts", "each layer on its own, synchronised after each"),
    fused.Variant("torch", "graph", "unfused", "torch.jit.trace of the module, not frozen"),
    fused.Variant("torch", "compile", "inductor", "torch.compile (inductor, default settings)", True),
    fused.Variant(
        "torch",
        "compile",
        "inductor-freezing",
        "torch.compile with torch._inductor.config.freezing, without autograd: weights become constants, "
        "BatchNorm folds into the convolution, MKL-DNN kernels take pointwise epilogues",
        True,
        FREEZING_BACKWARD,
    ),
    fused.Variant(
        "torch", fused.STAGE, "ao", "torch.ao.quantization.fuse_modules over the pattern's modules", True
    ),
    fused.Variant(
        "torch", fused.STAGE, "freeze", "torch.jit.freeze of the traced module (folds BatchNorm)", True
    ),
)
"""This framework's fused-pattern variants, in the order a configuration runs them."""

_TENSORS = ("data", "residual")
_MODULES = ("conv", "bn", "relu", "fc")
# A call in the body of inductor's generated ``call``: a fused C++ kernel, an extern kernel or an op
# (``torch.ops.mkldnn._convolution_pointwise.default``), and its arguments on the line.
_KERNEL = re.compile(
    r"^\s*(?:\w+ = )?(cpp_fused_\w+|extern_kernels\.\w+|torch\.ops(?:\.\w+)+)\((.*)\)\s*$", re.M
)
# The string arguments of an MKL-DNN kernel: its pointwise epilogue ('relu', 'add'; 'none' for none).
_QUOTED = re.compile(r"'(\w+)'")
# The aten names a pattern's layers go by in inductor's kernel names.
_ATEN = {
    "conv": ("convolution",),
    "bn": ("batch_norm",),
    "relu": ("relu",),
    "add": ("add",),
    "fc": ("addmm", "linear"),
}
# Inductor's options for a compile whose code is the proof (``_compiled``): its trace, of the generated
# code alone, no cache hit (which generates nothing), kernels named after their aten operators.
_PROOF_OPTIONS: dict[str, str | int | bool] = {
    "trace.enabled": True,
    "trace.output_code": True,
    "trace.fx_graph": False,
    "trace.fx_graph_transformed": False,
    "trace.ir_pre_fusion": False,
    "trace.ir_post_fusion": False,
    "fx_graph_cache": False,
    "cpp.descriptive_names": "original_aten",
}


@dataclass(frozen=True)
class Pattern:
    """A built pattern: its module (eval mode, parameters set) and the names of its tensor inputs."""

    spec: BenchmarkSpec
    module: Any
    names: tuple[str, ...]

    def run(self, **arguments: object) -> object:
        return self.module(*(arguments[n] for n in self.names))


@dataclass(frozen=True)
class Staged:
    """The calls a variant runs, what building it took, and its outputs against the unfused chain's
    (each call runs the pattern once: ``calls_per_call``, as a stage's ``Staged`` has it)."""

    calls: tuple[Call, ...]
    compile_s: float | None
    check: StageCheck | None
    calls_per_call: int = 1


def available(variant: str) -> bool:
    """Whether this PyTorch build has ``variant``: every variant runs on any build (one that cannot
    compile or freeze a pattern records why)."""
    return True


def build(spec: BenchmarkSpec) -> Pattern:
    """``spec``'s pattern as an eval-mode module with the seeded parameters
    (``opperf.operators.fused.parameters``),
    on the run's device in its dtype."""
    import torch

    from opperf.frameworks.torch.devices import torch_device

    pattern = fused.entry(spec.op)
    config = dict(spec.inputs)
    module = _module(pattern.layers, config)
    with torch.no_grad():
        for name, value in fused.parameters(pattern, config, spec.options.seed).items():
            _parameter(module, name).copy_(torch.from_numpy(value))
    names = tuple(n for n in _TENSORS if isinstance(config.get(n), TensorSpec))
    module = module.to(device=torch_device(spec.options.device), dtype=getattr(torch, spec.options.dtype))
    return Pattern(spec, module.eval(), names)


def stage_calls(
    built: Pattern,
    calls: Sequence[Call],
    scope: Callable[[], contextlib.AbstractContextManager[object]],
    synchronize: Callable[[], None],
) -> Staged:
    """``calls`` (the unfused module on each input set) run as ``built.spec``'s variant."""
    import torch

    spec = built.spec
    if spec.stage == "eager" and spec.variant == "unfused":
        return Staged(tuple(calls), None, None)
    with torch.no_grad():
        reference = calls[0]()
    if spec.variant == "parts":
        staged = tuple(_rebuilt(_parts(built, synchronize), call) for call in calls)
        with torch.no_grad():
            return Staged(staged, None, compare([_numpy(reference)], [_numpy(staged[0]())]))
    build_variant = _BUILDERS.get((spec.stage, spec.variant))
    if build_variant is None:
        raise SkipError(f"{spec.stage} stage: opperf has no {spec.variant} variant of fused patterns")
    tensors = tuple(calls[0].kwargs[n] for n in built.names)
    if build_variant is _compiled:
        warm_up_compiler()
    started = time.perf_counter()
    graph: Any = None  # a compile's trace folder, then the graph's kernels or nodes
    try:
        module, graph = build_variant(built, tensors)
        with scope(), _freezing(spec.variant):
            outputs = module(*tensors)
        synchronize()
        if isinstance(graph, Path):
            graph = inductor_kernels(graph)
    except SkipError:
        raise
    except Exception as error:
        if isinstance(graph, Path):  # the trace folder of a compile that failed
            shutil.rmtree(graph, ignore_errors=True)
        raise SkipError(
            f"{spec.stage} stage: {spec.variant} cannot take {spec.op}: {describe_error(error)}"
        ) from error
    compile_s = time.perf_counter() - started
    unfused, fusion = _unfused_graph(built, tensors), fused.variant(spec.framework, spec.stage, spec.variant)
    fused_now = _fused(built, spec.variant, unfused, graph)
    if fusion.fusion and spec.stage == fused.STAGE and not fused_now:
        raise SkipError(fused.unchanged_reason(spec.variant, unfused, graph))
    check = compare([_numpy(reference)], [_numpy(outputs)])
    check = StageCheck(check.agrees, check.max_abs_diff, check.detail, tuple(graph), fused_now)
    runner = Pattern(spec, module, built.names)
    return Staged(tuple(_rebuilt(runner.run, call) for call in calls), compile_s, check)


def _rebuilt(function: Callable[..., object], call: Call) -> Call:
    return Call(function, (), call.kwargs)


def _numpy(outputs: Any):
    return outputs.detach().cpu().numpy()


def _parts(built: Pattern, synchronize: Callable[[], None]) -> Callable[..., object]:
    layers = fused.entry(built.spec.op).layers

    def parts(**arguments: Any) -> object:
        out = arguments["data"]
        for layer in layers:
            out = out + arguments["residual"] if layer == "add" else getattr(built.module, layer)(out)
            synchronize()
        return out

    return parts


def _traced(built: Pattern, tensors: tuple) -> tuple[Any, list[str]]:
    import torch

    with torch.no_grad():
        traced = torch.jit.trace(copy.deepcopy(built.module), tensors, check_trace=False)
    return traced, _aten_nodes(traced.inlined_graph)


def _frozen(built: Pattern, tensors: tuple) -> tuple[Any, list[str]]:
    import torch

    with torch.no_grad():
        frozen = torch.jit.freeze(torch.jit.trace(copy.deepcopy(built.module), tensors, check_trace=False))
    return frozen, _aten_nodes(frozen.graph)


def _ao(built: Pattern, tensors: tuple) -> tuple[Any, list[str]]:
    """``fuse_modules`` over the pattern's modules in order, as a user lists them (an addition between
    them is not a module, so it is not seen)."""
    import torch

    module = copy.deepcopy(built.module)
    group = [name for name in _MODULES if hasattr(module, name)]
    fused_module = torch.ao.quantization.fuse_modules(module, [sorted(group, key=_order(built))])
    return fused_module, _leaf_modules(fused_module)


def _compiled(built: Pattern, tensors: tuple) -> tuple[Any, Path]:
    """``torch.compile`` of the module after resetting dynamo, tracing its code into a new folder; the
    graph is read from there after the first call compiles it (``inductor_kernels``)."""
    import torch

    torch._dynamo.reset()
    folder = Path(tempfile.mkdtemp(prefix="inductor-trace-", dir=_trace_root()))
    options: dict[str, str | int | bool | Callable[..., Any]] = {
        **_PROOF_OPTIONS,
        "trace.debug_dir": str(folder),
    }
    try:
        compiled = torch.compile(built.module, backend="inductor", dynamic=False, options=options)
    except RuntimeError as error:  # inductor checks its options here, before any compile
        raise SkipError(
            f"{fused.CANNOT_PROVE}: torch.compile refuses the options that trace inductor's code "
            f"({describe_error(error)})"
        ) from error
    return compiled, folder


@functools.cache
def _trace_root() -> Path:
    """Where this process's inductor traces go, removed when it ends: a compile that records for
    backward traces its backward graph there later, at the first backward pass."""
    root = Path(tempfile.mkdtemp(prefix="opperf-inductor-traces-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def _freezing(variant: str) -> contextlib.AbstractContextManager[object]:
    """Inductor's freezing for the ``inductor-freezing`` variant's compile (the first call); inductor
    reads it while compiling, not from ``torch.compile``'s options, and a compiled graph keeps it."""
    if variant != "inductor-freezing":
        return contextlib.nullcontext()
    from torch._inductor import config

    return config.patch(freezing=True)


def inductor_kernels(folder: Path) -> list[str]:
    """The kernels the ``call`` function of the code inductor traced into ``folder`` runs, in order; an
    MKL-DNN kernel with a pointwise epilogue carries it in brackets
    (``torch.ops.mkldnn._convolution_pointwise.default[relu]``). SkipError "cannot prove fusion" when
    there is no code, or no kernel call in it."""
    sources = sorted(folder.rglob("output_code.py"))
    texts = [path.read_text(encoding="utf-8") for path in sources]
    shutil.rmtree(folder, ignore_errors=True)
    if not texts:
        raise SkipError(
            f"{fused.CANNOT_PROVE}: inductor traced no output_code.py (torch.compile's trace.enabled "
            "option) for this compile"
        )
    kernels = [_kernel(name, arguments) for text in texts for name, arguments in _calls(text)]
    if not kernels:
        raise SkipError(f"{fused.CANNOT_PROVE}: no kernel call found in inductor's generated call()")
    return kernels


def _calls(text: str) -> list[tuple[str, str]]:
    start = text.find("def call(")
    return _KERNEL.findall(text[start:]) if start >= 0 else []


def _kernel(name: str, arguments: str) -> str:
    if not name.startswith("torch.ops.mkldnn."):
        return name
    epilogues = [quoted for quoted in _QUOTED.findall(arguments) if quoted != "none"]
    return f"{name}[{','.join(epilogues)}]" if epilogues else name


_BUILDERS = {
    ("graph", "unfused"): _traced,
    ("compile", "inductor"): _compiled,
    ("compile", "inductor-freezing"): _compiled,
    (fused.STAGE, "ao"): _ao,
    (fused.STAGE, "freeze"): _frozen,
}


def _order(built: Pattern) -> Callable[[str], int]:
    layers = fused.entry(built.spec.op).layers
    return layers.index


def _aten_nodes(graph: Any) -> list[str]:
    return [n.kind() for n in graph.nodes() if n.kind().startswith(("aten::", "prim::mkldnn", "mkldnn::"))]


def _leaf_modules(module: Any) -> list[str]:
    """The module's compute layers by type (``Identity`` placeholders fusion leaves are no layer)."""
    return [type(m).__name__ for m in module.children() if type(m).__name__ != "Identity"]


def _unfused_graph(built: Pattern, tensors: tuple) -> list[str]:
    """The unfused pattern as the variant's proof lists it: leaf modules (``ao``), else the aten nodes
    of its trace."""
    if built.spec.variant == "ao":
        return _leaf_modules(built.module)
    return _traced(built, tensors)[1]


def _fused(built: Pattern, variant: str, unfused: list[str], graph: list[str]) -> bool:
    """Whether the variant's graph fused any layers: fewer nodes than the unfused pattern, or for
    inductor (whose kernel count also holds layout copies) ``inductor_fused``."""
    if not variant.startswith("inductor"):
        return fused.fewer_nodes(unfused, graph)
    return inductor_fused(fused.entry(built.spec.op).layers, graph)


def inductor_fused(layers: Sequence[str], kernels: Sequence[str]) -> bool:
    """Whether inductor's ``kernels`` fused any of ``layers``: one kernel computes two of them (a
    ``cpp_fused_`` kernel named after both, an MKL-DNN kernel with the next layer as its epilogue), or
    a layer has no kernel at all (freezing folded BatchNorm into the convolution's weights; the outputs
    check that the result is still the pattern's)."""
    covered = [
        {layer for layer in layers if any(name in kernel for name in _ATEN[layer])} for kernel in kernels
    ]
    every = set().union(*covered) if covered else set()
    return any(len(layers_of) >= 2 for layers_of in covered) or bool(set(layers) - every)


def _module(layers: Sequence[str], config: dict):
    import torch

    channels = config["data"].shape[1]

    class PatternModule(torch.nn.Module):
        """The pattern's layers over ``data`` (and the residual, where it adds one)."""

        def __init__(self) -> None:
            super().__init__()
            if "conv" in layers:
                kernel = int(config["kernel"])
                self.conv = torch.nn.Conv2d(channels, channels, kernel, padding=kernel // 2)
            if "bn" in layers:
                self.bn = torch.nn.BatchNorm2d(channels)
            if "fc" in layers:
                self.fc = torch.nn.Linear(channels, int(config["units"]))
            if "relu" in layers:
                self.relu = torch.nn.ReLU()

        def forward(self, data, *rest):
            out = data
            for layer in layers:
                out = out + rest[0] if layer == "add" else getattr(self, layer)(out)
            return out

    return PatternModule()


_PARAMETERS = {
    "conv_weight": ("conv", "weight"),
    "conv_bias": ("conv", "bias"),
    "gamma": ("bn", "weight"),
    "beta": ("bn", "bias"),
    "mean": ("bn", "running_mean"),
    "var": ("bn", "running_var"),
    "fc_weight": ("fc", "weight"),
    "fc_bias": ("fc", "bias"),
}


def _parameter(module: object, name: str):
    layer, attribute = _PARAMETERS[name]
    return getattr(getattr(module, layer), attribute)
