"""MXNet inputs derived from an operator's signature: argument name first, then argument type.

One input configuration is produced per shape of the size profile. Optional arguments keep the
operator's own defaults unless a name rule exists for them; a required argument no rule can satisfy
makes the operator unbenchmarkable, which the caller records as a skip with that argument named.
"""

from __future__ import annotations

from opperf.operators.info import ArgKind, Argument, OpInfo
from opperf.operators.rules.generic import LIST_LENGTH, Rule, RuleContext, type_default
from opperf.operators.rules.profiles import SizeProfile
from opperf.results.measurement import InputValue, TensorSpec

# Binary operators whose names say they broadcast; the rest need equal shapes.
BROADCASTING_PREFIXES = ("broadcast_", "_npi_")

# Required scalar arguments by name, shared by every operator that takes them.
SCALAR_RULES: dict[str, Rule] = {
    "scalar": lambda c: 2.0,
    "axis": lambda c: 0,
    "num_outputs": lambda c: 2 if c.rows % 2 == 0 else 1,
    "lr": lambda c: 0.1,
    "wd": lambda c: 0.0,
    "eta": lambda c: 0.5,
    "t": lambda c: 1,
    "a_min": lambda c: 0.2,
    "a_max": lambda c: 0.8,
    "block_size": lambda c: 2,
    "shape": lambda c: c.shape,
    "begin": lambda c: (0,) * len(c.shape),
    "end": lambda c: tuple(max(1, d // 2) for d in c.shape),
    "low": lambda c: 0,
    "high": lambda c: 5,
    "value": lambda c: 1.5,
    "start": lambda c: 0.0,
    "min_factor": lambda c: 0.5,
    "max_factor": lambda c: 1.5,
    "threshold": lambda c: 0.5,
    "spatial_scale": lambda c: 1.0,
    "range_max": lambda c: 1000,
    "num_arrays": lambda c: LIST_LENGTH,  # must equal the tensor list's length, or MXNet segfaults
    "out_dim": lambda c: 16,
}

# Optional arguments that set the output shape of operators with no tensor input (creation, sampling):
# left at their default, such operators would produce an empty tensor.
SOURCE_SHAPE_ARGUMENTS = frozenset({"shape"})

# Tensors whose values index into another input: integral values within the indexed extent.
INDEX_TENSORS: dict[str, Rule] = {
    "index": lambda c: TensorSpec((c.rows,), low=0, high=c.shape[-1], integral=True),
    "indices": lambda c: TensorSpec((c.rows,), low=0, high=c.rows, integral=True),
}


def _tensor_value(arg: Argument, context: RuleContext, binary: bool) -> InputValue:
    if arg.kind is ArgKind.TENSOR_LIST:
        return tuple(TensorSpec(context.shape) for _ in range(LIST_LENGTH))
    if binary and arg.name in ("lhs", "rhs"):
        return TensorSpec(context.pair[0] if arg.name == "lhs" else context.pair[1])
    if arg.name in INDEX_TENSORS:
        return INDEX_TENSORS[arg.name](context)
    return TensorSpec(context.shape)


def derive_inputs(op: OpInfo, profile: SizeProfile) -> list[dict[str, InputValue]]:
    """One input configuration per profile shape, from the operator's signature alone."""
    tensor_names = {a.name for a in op.tensor_arguments}
    binary = {"lhs", "rhs"} <= tensor_names and op.name.startswith(BROADCASTING_PREFIXES)
    configurations = []
    shapes = profile.shapes_for(op.category)
    pairs = profile.broadcast_pairs if shapes == profile.shapes else tuple((s, s) for s in shapes)
    for shape, pair in zip(shapes, pairs, strict=False):
        context = RuleContext(op=op, shape=shape, pair=pair)
        inputs: dict[str, InputValue] = {}
        for arg in op.arguments:
            if arg.is_tensor:
                inputs[arg.name] = _tensor_value(arg, context, binary)
            elif arg.name == op.var_args_key:
                continue
            elif arg.required or (arg.name in SOURCE_SHAPE_ARGUMENTS and not tensor_names):
                rule = SCALAR_RULES.get(arg.name)
                inputs[arg.name] = rule(context) if rule else type_default(arg, context)
        configurations.append(inputs)
    return configurations
