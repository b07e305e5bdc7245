"""MXNet's fused patterns: one Gluon HybridBlock per pattern, run imperatively (``unfused``), layer by
layer with a ``waitall`` after each (``parts``), hybridized (``graph``), partitioned by
``optimize_for(x, backend=...)`` (``mkldnn``, ``onednn``), or rewritten with MXNet's contrib fused
operators and run imperatively (``contrib``).

The proof of fusion is the graph itself, read through public APIs, never the backend's word: the
symbol JSON ``HybridBlock.export`` writes of the hybridized or optimised block, and ``Symbol.tojson``
of the block applied to symbols for the unfused and contrib blocks. ``backend='ONEDNN'`` (MXNet 2.x's
name) leaves a 1.9.1 graph as it was without an error, and MKL-DNN fuses
``Activation(act_type='relu')`` but not ``relu``, so the blocks write ReLU as ``Activation``. Backward
through an MKL-DNN fused block returns all-zero gradients without an error in MXNet 1.9.1, so its
records refuse backward with that reason (``MKLDNN_BACKWARD``).

MXNet 1.9.1 registers one contrib fused operator for these layers: ``_contrib_BatchNormWithReLU``
(``gluon.nn.BatchNormReLU``), BatchNorm and ReLU in one; its convolution and fully connected operators
take no activation, and its other fused operators (``_sg_mkldnn_*``) exist only inside a partitioned
graph. Its gradient agrees with the unfused chain's when recorded in training mode, the only mode
opperf runs backward in (recorded in predict mode it is wrong, without an error).
"""

from __future__ import annotations

import functools
import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from opperf.measure.harness import SkipError
from opperf.measure.stages import StageCheck, compare
from opperf.operators import fused
from opperf.results.measurement import BenchmarkSpec, TensorSpec

if TYPE_CHECKING:
    from opperf.frameworks.mxnet.stages import Call

MKLDNN_BACKWARD = (
    "MKL-DNN fused blocks are inference only: backward through optimize_for's fused graph returns "
    "all-zero gradients without an error (MXNet 1.9.1)"
)


VARIANTS: tuple[fused.Variant, ...] = (
    fused.Variant("mxnet", "eager", "unfused", "the Gluon block imperatively, one mx.nd operator per layer"),
    fused.Variant("mxnet", "eager", "parts", "each layer on its own, synchronised (waitall) after each"),
    fused.Variant("mxnet", "graph", "unfused", "the block hybridized with static allocation and shapes"),
    fused.Variant(
        "mxnet",
        fused.STAGE,
        "mkldnn",
        "optimize_for(x, backend='MKLDNN'): MKL-DNN subgraphs",
        True,
        MKLDNN_BACKWARD,
    ),
    fused.Variant(
        "mxnet",
        fused.STAGE,
        "onednn",
        "optimize_for(x, backend='ONEDNN'), MXNet 2.x's name",
        True,
        MKLDNN_BACKWARD,
    ),
    fused.Variant(
        "mxnet",
        fused.STAGE,
        "contrib",
        "MXNet's contrib fused operators, imperatively: BatchNorm+ReLU as one "
        "_contrib_BatchNormWithReLU (gluon.nn.BatchNormReLU), the only one 1.9.1 has for these layers",
        True,
    ),
)
"""This framework's fused-pattern variants, in the order a configuration runs them (its compile stage
has none: it runs as for any operator, skipped with MXNet's reason)."""

_BACKENDS = {"mkldnn": "MKLDNN", "onednn": "ONEDNN"}
_FEATURE_MAJOR = {"mkldnn": ("MKLDNN", 1), "onednn": ("ONEDNN", 2)}
"""Fusion variant -> the build feature and MXNet major version that have its backend."""


@functools.cache
def available(variant: str) -> bool:
    """Whether this MXNet build has ``variant``'s fusion backend: ``mkldnn`` in a 1.x build with
    MKL-DNN, ``onednn`` (its 2.x name) in a 2.x build with oneDNN; any other variant always. A backend
    name the build lacks leaves the graph as it was, so listing it would only add skipped records."""
    if variant not in _FEATURE_MAJOR:
        return True
    import mxnet as mx

    feature, major = _FEATURE_MAJOR[variant]
    if int(mx.__version__.split(".")[0]) != major:
        return False
    features = mx.runtime.Features()
    return feature in features and features.is_enabled(feature)


_TENSORS = ("data", "residual")
CONTRIB: dict[tuple[str, ...], str] = {("bn", "relu"): "bn_relu"}
"""Runs of a pattern's layers that one MXNet contrib fused operator computes, and the layer that runs
it (``bn_relu``: ``gluon.nn.BatchNormReLU``, the operator ``_contrib_BatchNormWithReLU``)."""


@dataclass(frozen=True)
class Pattern:
    """A built pattern: its block (parameters set) and the names of its tensor inputs, in order."""

    spec: BenchmarkSpec
    block: Any
    names: tuple[str, ...]

    def run(self, **arguments: object) -> object:
        """The block: imperatively (one mx.nd operator per layer) until hybridized or optimised."""
        return self.block(*(arguments[n] for n in self.names))

    def parts(self, **arguments: object) -> object:
        """Each layer on its own, synchronised after each: the sum of the parts."""
        import mxnet as mx

        out = arguments["data"]
        for layer in fused.entry(self.spec.op).layers:
            out = _step(mx.nd, self.block, layer, out, arguments.get("residual"))
            mx.nd.waitall()
        return out


@dataclass(frozen=True)
class Staged:
    """The calls a variant runs, what building it took, its outputs against the unfused chain's, and
    why it has no backward pass (None: it has)."""

    calls: tuple[Call, ...]
    compile_s: float | None
    check: StageCheck | None
    backward_refusal: str | None = None


def build(spec: BenchmarkSpec, layers: tuple[str, ...] | None = None) -> Pattern:
    """``spec``'s pattern as a Gluon block with the seeded parameters
    (``opperf.operators.fused.parameters``), on
    the run's device in its dtype; ``layers`` replaces the pattern's own (``contrib_layers``)."""
    import mxnet as mx

    from opperf.frameworks.mxnet.devices import context

    pattern = fused.entry(spec.op)
    config = dict(spec.inputs)
    block = _block(layers or pattern.layers, config)
    ctx = context(spec.options.device)
    block.initialize(ctx=ctx)
    for name, value in fused.parameters(pattern, config, spec.options.seed).items():
        _parameter(block, name).set_data(mx.nd.array(value, ctx=ctx))
    block.cast(spec.options.dtype)
    names = tuple(n for n in _TENSORS if isinstance(config.get(n), TensorSpec))
    return Pattern(spec, block, names)


def stage_calls(
    built: Pattern,
    calls: Sequence[Call],
    make_call: Callable[[Callable[..., object], dict], Call],
) -> Staged:
    """``calls`` (the unfused chain on each input set) run as ``built.spec``'s variant."""
    import mxnet as mx
    from mxnet import autograd

    spec = built.spec
    if spec.stage == "eager" and spec.variant != "parts":
        return Staged(tuple(calls), None, None)
    if spec.stage == "eager":
        staged = tuple(make_call(built.parts, call.kwargs) for call in calls)
        return Staged(staged, None, _check(calls[0], staged[0]))
    if spec.stage not in ("graph", fused.STAGE):
        from opperf.frameworks.mxnet.stages import NO_COMPILE

        raise SkipError(NO_COMPILE)
    unfused_ops = _symbol_ops(built)
    if spec.variant == "contrib":
        return _contrib(built, calls, make_call, unfused_ops)
    with autograd.predict_mode():
        reference = calls[0]()
    arrays = [calls[0].kwargs[n] for n in built.names]
    started = time.perf_counter()
    try:
        if spec.stage == "graph":
            built.block.hybridize(static_alloc=True, static_shape=True)
        else:
            built.block.optimize_for(*arrays, backend=_BACKENDS[spec.variant])
        with autograd.predict_mode():
            outputs = built.block(*arrays)
        mx.nd.waitall()
    except Exception as error:
        from opperf.frameworks.mxnet.errors import describe_error

        raise SkipError(
            f"{spec.stage} stage: MXNet cannot build {spec.variant}: {describe_error(error)}"
        ) from error
    compile_s = time.perf_counter() - started
    optimised = exported_ops(built.block)
    is_fusion = spec.stage == fused.STAGE
    if is_fusion and not fused.fewer_nodes(unfused_ops, optimised):
        raise SkipError(
            fused.unchanged_reason(
                f"optimize_for(backend={_BACKENDS[spec.variant]!r})", unfused_ops, optimised
            )
        )
    check = compare([reference.asnumpy()], [outputs.asnumpy()])
    check = StageCheck(check.agrees, check.max_abs_diff, check.detail, tuple(optimised), is_fusion)
    staged = tuple(make_call(built.run, call.kwargs) for call in calls)
    return Staged(staged, compile_s, check, _backward_refusal(spec))


def contrib_layers(layers: tuple[str, ...]) -> tuple[str, ...]:
    """``layers`` with each run that a contrib fused operator computes (``CONTRIB``) replaced by it."""
    out: list[str] = []
    for layer in layers:
        out.append(layer)
        for run, replacement in CONTRIB.items():
            if tuple(out[-len(run) :]) == run:
                out[-len(run) :] = [replacement]
    return tuple(out)


def _contrib(
    built: Pattern,
    calls: Sequence[Call],
    make_call: Callable[[Callable[..., object], dict], Call],
    unfused_ops: list[str],
) -> Staged:
    """The pattern with MXNet's contrib fused operators, run imperatively; skipped with "graph
    unchanged" where none computes any of its layers (its graph has as many operators)."""
    spec = built.spec
    rewritten = build(spec, contrib_layers(fused.entry(spec.op).layers))
    contrib_ops = _symbol_ops(rewritten)
    if not fused.fewer_nodes(unfused_ops, contrib_ops):
        raise SkipError(
            fused.unchanged_reason("MXNet 1.9.1's contrib fused operators", unfused_ops, contrib_ops)
        )
    staged = tuple(make_call(rewritten.run, call.kwargs) for call in calls)
    check = _check(calls[0], staged[0])
    check = StageCheck(check.agrees, check.max_abs_diff, check.detail, tuple(contrib_ops), True)
    return Staged(staged, None, check, _backward_refusal(spec))


def exported_ops(block: Any) -> list[str]:
    """The compute nodes of the graph a hybridized (or ``optimize_for``-partitioned) block runs, read
    from the symbol file ``HybridBlock.export`` writes; SkipError "cannot prove fusion" when it cannot
    be written or read."""
    with tempfile.TemporaryDirectory(prefix="opperf-export-") as folder:
        try:
            block.export(f"{folder}/pattern")
            with open(f"{folder}/pattern-symbol.json", encoding="utf-8") as symbol:
                return _json_ops(symbol.read())
        except Exception as error:
            from opperf.frameworks.mxnet.errors import describe_error

            raise SkipError(
                f"{fused.CANNOT_PROVE}: the block's graph cannot be read through HybridBlock.export "
                f"({describe_error(error)})"
            ) from error


def _symbol_ops(built: Pattern) -> list[str]:
    """The compute nodes of the block applied to symbols (``Symbol.tojson``): its graph as written."""
    import mxnet as mx

    return _json_ops(built.block(*(mx.sym.var(n) for n in built.names)).tojson())


def _check(reference: Callable[[], Any], variant: Callable[[], Any]) -> StageCheck:
    from mxnet import autograd

    with autograd.predict_mode():
        return compare([reference().asnumpy()], [variant().asnumpy()])


def _json_ops(text: str) -> list[str]:
    """The compute nodes of a symbol's JSON graph, in order (variables left out)."""
    return [node["op"] for node in json.loads(text)["nodes"] if node["op"] != "null"]


def _step(F, block, layer: str, out, residual):  # noqa: N803 (Gluon's name)
    """One layer of a pattern; ReLU as ``Activation``, the form MKL-DNN fuses; ``bn_relu`` is the
    BatchNorm layer that fuses ReLU (``gluon.nn.BatchNormReLU``)."""
    if layer == "bn_relu":
        return block.bn(out)
    if layer == "relu":
        return F.Activation(out, act_type="relu")
    if layer == "add":
        return F.elemwise_add(out, residual)
    return getattr(block, layer)(out)


def _block(layers: Sequence[str], config: dict):
    from mxnet import gluon

    data = config["data"]
    channels = data.shape[1]

    class PatternBlock(gluon.HybridBlock):
        """The pattern's layers over ``data`` (and the residual, where it adds one)."""

        def __init__(self) -> None:
            super().__init__()
            with self.name_scope():
                if "conv" in layers:
                    kernel = int(config["kernel"])
                    self.conv = gluon.nn.Conv2D(channels, kernel, padding=kernel // 2, in_channels=channels)
                if "bn" in layers or "bn_relu" in layers:
                    norm = gluon.nn.BatchNormReLU if "bn_relu" in layers else gluon.nn.BatchNorm
                    self.bn = norm(in_channels=channels, use_global_stats=True)
                if "fc" in layers:
                    self.fc = gluon.nn.Dense(int(config["units"]), in_units=channels)

        def hybrid_forward(self, F, data, *rest):  # noqa: N803 (Gluon's name)
            out = data
            for layer in layers:
                out = _step(F, self, layer, out, rest[0] if rest else None)
            return out

    return PatternBlock()


_PARAMETERS = {
    "conv_weight": ("conv", "weight"),
    "conv_bias": ("conv", "bias"),
    "gamma": ("bn", "gamma"),
    "beta": ("bn", "beta"),
    "mean": ("bn", "running_mean"),
    "var": ("bn", "running_var"),
    "fc_weight": ("fc", "weight"),
    "fc_bias": ("fc", "bias"),
}


def _parameter(block: object, name: str):
    layer, attribute = _PARAMETERS[name]
    return getattr(getattr(block, layer), attribute)


def _backward_refusal(spec: BenchmarkSpec) -> str | None:
    return fused.backward_refusal(spec.namespace, spec.framework, spec.stage, spec.variant)
