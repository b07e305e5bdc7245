"""``opperf explain OP``: everything opperf knows about one operator, and why, without running it.

The registry record (aliases, entry point, arguments), the category and the predicate that chose it,
the rule that makes its inputs and the input configurations it makes, the work counter behind its
roofline figures, or the reason it is skipped. A long-tail operator shows its DLOP-Bench tags, its
source and what it computes instead of a registry record; a fused pattern its layers and the variants
each stage runs it in.
"""

from __future__ import annotations

import argparse

from opperf.frameworks import describe, framework_module, get_backend
from opperf.measure.harness import drawn_input
from opperf.measure.roofline.work import count_work, counters
from opperf.operators import fused, longtail
from opperf.operators.info import Argument, OpInfo
from opperf.operators.rules import NoRuleError, inputs_for
from opperf.operators.rules.generic import rule_name
from opperf.operators.rules.profiles import STANDARD
from opperf.operators.values import describe_distribution
from opperf.results.measurement import BenchmarkSpec, InputValue, TensorSpec, describe_value, freeze_inputs
from opperf.results.options import RunOptions, option_argument
from opperf.sweep.run import select_operators
from opperf.utils.devices import Device

HELP = "explain how opperf benchmarks one operator: category, rule, inputs, roofline counter"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("op", metavar="OP", help="an operator's registry name or alias, e.g. Convolution")
    option_argument(parser, "framework")
    parser.add_argument(
        "--ctx", default="cpu", help="the device kind whose rules and skips apply (default: cpu)"
    )
    for name in ("dtype", "values", "layout"):
        option_argument(parser, name)


def run(arguments: argparse.Namespace) -> int:
    backend = get_backend(arguments.framework)
    (op,) = select_operators(backend, (arguments.op,), ())
    kind = Device.parse(arguments.ctx).requested().kind  # the kind decides; no GPU need be here
    drawing = RunOptions(
        framework=arguments.framework,
        dtype=arguments.dtype,
        values=arguments.values,
        layout=arguments.layout,
    ).validated(backend)  # what a sweep refuses, explain refuses: JAX float64 without x64
    print(explain(op, kind, drawing))
    return 0


def explain(op: OpInfo, device_kind: str, drawing: RunOptions | None = None) -> str:
    """The explanation of ``op`` as text; each tensor's values and layout as ``drawing`` (its dtype,
    ``--values`` and ``--layout``) would draw them."""
    drawing = drawing or RunOptions(framework=op.framework)
    if op.category == longtail.CATEGORY:
        return explain_longtail(op)
    if op.category == fused.CATEGORY:
        return explain_fused(op)
    category = next(
        c for c in framework_module(op.framework, "categories").CATEGORIES if c.name == op.category
    )
    rules = framework_module(op.framework, "rules")
    lines = [
        f"{op.name} ({op.framework})",
        f"  called as:   {', '.join(f'{space}.{op.function_name}' for space in op.namespaces)}",
        f"  aliases:     {', '.join(op.aliases) or 'none'}",
        f"  category:    {category.name}: {category.description} (the first category in "
        f"opperf/frameworks/{op.framework}/categories.py whose predicate accepts it)",
        f"  backward:    {'registered' if op.has_backward else 'none registered'} (a sweep finds out by "
        "running it)",
        "  arguments:",
        *(f"    {a.name}: {_declared(a)}" for a in op.arguments),
        f"  input rule:  {rules.rule_for(op, device_kind)}",
    ]
    counter = counters(op.framework).get(op.name)
    uncounted = describe(op.framework).work_note or "no work counter: no roofline figures"
    lines.append(f"  roofline:    {rule_name(counter) if counter else uncounted}")
    try:
        configurations = inputs_for(op, STANDARD, device_kind)
    except NoRuleError as reason:
        lines.append(f"  skipped:     {reason}")
        return "\n".join(lines)
    lines.append(
        f"  input configurations ({STANDARD.name} profile, {device_kind}; {drawing.dtype}, values "
        f"{drawing.values}, layout {drawing.layout}):"
    )
    for index, inputs in enumerate(configurations, start=1):
        described = ", ".join(f"{name}={_drawn(value, drawing)}" for name, value in inputs.items())
        spec = BenchmarkSpec(
            op.namespaces[0], op.name, freeze_inputs(inputs), RunOptions(framework=op.framework)
        )
        work = count_work(spec)
        counted = f"  [{work.bytes_moved:,} bytes, {work.flops:,} FLOPs]" if work else ""
        lines.append(f"    {index}. {described}{counted}")
    return "\n".join(lines)


def explain_longtail(op: OpInfo) -> str:
    """A long-tail operator: tags, origin and source, what it computes, its input configurations."""
    entry = longtail.entry(op.name)
    lines = [
        f"{op.name} ({op.framework}, long-tail)",
        f"  called as:   {longtail.NAMESPACE}.{op.name} (opperf/frameworks/{op.framework}/longtail.py)",
        f"  category:    {longtail.CATEGORY}: a composite of basic operators written in Python",
        f"  tags:        {', '.join(entry.tags)} (DLOP-Bench's vocabulary)",
        f"  origin:      {entry.origin}",
        f"  source:      {entry.source}",
        f"  computes:    {entry.computes}",
        "  arguments:",
        *(f"    {a.name}: {a.type_string}" for a in op.arguments),
        "  input rule:  the catalogue's sizes (opperf/operators/longtail/entries.py)",
        f"  input configurations (sizes {', '.join('x'.join(map(str, size)) for size in entry.sizes)}):",
    ]
    for index, inputs in enumerate(entry.configurations(), start=1):
        described = ", ".join(f"{name}={_text(describe_value(value))}" for name, value in inputs.items())
        lines.append(f"    {index}. {described}")
    return "\n".join(lines)


def explain_fused(op: OpInfo) -> str:
    """A fused pattern: its layers, what it computes, the variants of each stage, its configurations."""
    pattern = fused.entry(op.name)
    lines = [
        f"{op.name} ({op.framework}, fused pattern)",
        f"  called as:   {fused.NAMESPACE}.{op.name} (opperf/frameworks/{op.framework}/fused.py)",
        f"  category:    {fused.CATEGORY}: a chain of layers that fusion backends make one kernel",
        f"  layers:      {' -> '.join(pattern.layers)}",
        f"  computes:    {pattern.computes}",
        "  variants (--stages picks the stages; fusion backends prove fusion from their graph):",
        *(f"    {v.stage}/{v.name}: {v.runs}" for v in fused.framework_variants(op.framework)),
        "  input rule:  the pattern table's sizes (opperf/operators/fused/patterns.py)",
        "  input configurations:",
    ]
    for index, inputs in enumerate(pattern.configurations(), start=1):
        described = ", ".join(f"{name}={_text(describe_value(value))}" for name, value in inputs.items())
        lines.append(f"    {index}. {described}")
    return "\n".join(lines)


def _drawn(value: InputValue, drawing: RunOptions) -> str:
    """An input as ``_text`` shows it; a tensor with the values and layout ``drawing`` gives it."""
    if not isinstance(value, TensorSpec):
        return _text(describe_value(value))
    drawn = drawn_input(value, drawing)
    assert isinstance(drawn, TensorSpec)  # a tensor's description stays one
    laid_out = f", {drawing.layout}" if drawn.storage != value.storage else ""
    return f"{_text(describe_value(value))} ({describe_distribution(drawn, drawing.dtype)}{laid_out})"


def _text(described: object) -> str:
    """A described input as a person reads it: a tensor as ``32x16x32`` (with a dtype if it has one)."""
    if isinstance(described, dict) and "shape" in described:
        shape = "x".join(map(str, described["shape"])) or "scalar"
        extra = [str(described[key]) for key in ("dtype", "storage") if key in described]
        return f"{shape} {' '.join(extra)}".strip()
    if isinstance(described, list):
        return "[" + ", ".join(_text(item) for item in described) + "]"
    return repr(described) if isinstance(described, str) else str(described)


def _declared(argument: Argument) -> str:
    """An argument's registry type, saying once whether it is optional (MXNet's type strings say it)."""
    text = argument.type_string
    return text if argument.required or "optional" in text else f"{text} (optional)"
