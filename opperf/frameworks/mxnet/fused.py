"""MXNet's fused patterns: one Gluon HybridBlock per pattern, run imperatively (``unfused``), layer by
layer with a ``waitall`` after each (``parts``), hybridized (``graph``), or partitioned by
``optimize_for(x, backend=...)`` (``mkldnn``, ``onednn``).

The proof of fusion is the optimised graph itself (its node names: the block's cached graph after
``optimize_for``), never the backend's word: ``backend='ONEDNN'`` (MXNet 2.x's name) leaves a 1.9.1
graph as it was without an error, and MKL-DNN fuses ``Activation(act_type='relu')`` but not ``relu``,
so the blocks write ReLU as ``Activation``. Backward through an MKL-DNN fused block returns all-zero
gradients without an error in MXNet 1.9.1, so its records refuse backward with that reason.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from opperf import fused
from opperf.harness import SkipError
from opperf.results import BenchmarkSpec, TensorSpec
from opperf.stages import StageCheck, compare

FUSED_BACKWARD = (
    "MKL-DNN fused blocks are inference only: backward through optimize_for's fused graph returns "
    "all-zero gradients without an error (MXNet 1.9.1)"
)
_BACKENDS = {"mkldnn": "MKLDNN", "onednn": "ONEDNN"}
_TENSORS = ("data", "residual")


@dataclass(frozen=True)
class Pattern:
    """A built pattern: its block (parameters set) and the names of its tensor inputs, in order."""

    spec: BenchmarkSpec
    block: object
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

    calls: tuple[Callable[[], object], ...]
    compile_s: float | None
    check: StageCheck | None
    backward_refusal: str | None = None


def build(spec: BenchmarkSpec) -> Pattern:
    """``spec``'s pattern as a Gluon block with the seeded parameters (``opperf.fused.parameters``), on
    the run's device in its dtype."""
    import mxnet as mx

    from opperf.frameworks.mxnet.devices import context

    pattern = fused.entry(spec.op)
    config = dict(spec.inputs)
    block = _block(pattern.layers, config)
    ctx = context(spec.options.device)
    block.initialize(ctx=ctx)
    for name, value in fused.parameters(pattern, config, spec.options.seed).items():
        _parameter(block, name).set_data(mx.nd.array(value, ctx=ctx))
    block.cast(spec.options.dtype)
    names = tuple(n for n in _TENSORS if isinstance(config.get(n), TensorSpec))
    return Pattern(spec, block, names)


def stage_calls(
    built: Pattern,
    calls: Sequence[object],
    make_call: Callable[[Callable[..., object], dict], object],
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
    with autograd.predict_mode():
        reference = calls[0]()
    unfused_ops = _graph_ops(built.block(*(mx.sym.var(n) for n in built.names)))
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
        from opperf.frameworks.mxnet.session import describe_error

        raise SkipError(
            f"{spec.stage} stage: MXNet cannot build {spec.variant}: {describe_error(error)}"
        ) from error
    compile_s = time.perf_counter() - started
    optimised = _graph_ops(built.block._cached_graph[1])
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
    return Staged(staged, compile_s, check, FUSED_BACKWARD if is_fusion else None)


def _check(reference: Callable[[], object], variant: Callable[[], object]) -> StageCheck:
    from mxnet import autograd

    with autograd.predict_mode():
        return compare([reference().asnumpy()], [variant().asnumpy()])


def _graph_ops(symbol: object) -> list[str]:
    """The compute nodes of a symbol's graph, in order (variables left out)."""
    return [node["op"] for node in json.loads(symbol.tojson())["nodes"] if node["op"] != "null"]


def _step(F, block, layer: str, out, residual):  # noqa: N803 (Gluon's name)
    """One layer of a pattern; ReLU as ``Activation``, the form MKL-DNN fuses."""
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
                if "bn" in layers:
                    self.bn = gluon.nn.BatchNorm(in_channels=channels, use_global_stats=True)
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
