"""Fuzzed and skewed shapes: determinism across processes, independence between operators, caps,
skew, broadcasting, and the report's shape-sensitivity view."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import replace

import pytest

from opperf.frameworks import get_backend
from opperf.operators.rules.fuzz import (
    REGIMES,
    ShapeConstraints,
    base_constraints,
    draw_shapes,
    memory_cap_elements,
    operator_seed,
)
from opperf.operators.rules.profiles import STANDARD
from opperf.report.markdown import render_markdown
from opperf.results.options import RunOptions, SweepFactors
from opperf.sweep.run import SweepConfig, select_operators, specs_for
from opperf.utils.errors import OpperfError

PLAN = """
import json, sys
from opperf.frameworks import get_backend
from opperf.results.options import RunOptions, SweepFactors
from opperf.operators.rules.fuzz import shapes_checksum
from opperf.sweep.run import SweepConfig, select_operators, specs_for
backend = get_backend("mxnet")
config = SweepConfig(options=RunOptions(seed=11), factors=SweepFactors(shapes="fuzz", fuzz_count=4))
ops = select_operators(backend, sys.argv[1].split(","), ())
specs = [s for op in ops for s in specs_for(op, config, backend)]
print(json.dumps({"inputs": [[s.op, s.describe_inputs()] for s in specs],
                  "checksum": shapes_checksum((s.op, s.describe_inputs()) for s in specs)}))
"""


def _plan_in_a_process(ops: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PLAN, ops], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(done.stdout)


def test_same_seed_gives_identical_inputs_in_two_processes() -> None:
    first = _plan_in_a_process("broadcast_add,relu,Convolution")
    second = _plan_in_a_process("broadcast_add,relu,Convolution")
    assert first == second
    assert len(first["inputs"]) >= 10
    shapes = {json.dumps(inputs) for _, inputs in first["inputs"]}
    assert len(shapes) == len(first["inputs"])  # drawn, not one shape repeated


VALUES = """
import hashlib, json, sys
import numpy as np
from opperf.frameworks import get_backend
from opperf.results.options import RunOptions, SweepFactors
from opperf.sweep.run import SweepConfig, select_operators, specs_for
backend = get_backend(sys.argv[1])
options = RunOptions(framework=sys.argv[1], seed=11, run_backward=False)
config = SweepConfig(options=options, factors=SweepFactors(shapes="fuzz", fuzz_count=3))
digests = []
for op in select_operators(backend, ["exp"], ()):
    for spec in specs_for(op, config, backend):
        out = backend.session.prepare(spec, spec.options.seed, None).forward()
        value = getattr(out, "value", out)
        array = np.ascontiguousarray(value.asnumpy() if hasattr(value, "asnumpy") else value.numpy())
        digests.append([spec.describe_inputs(), hashlib.sha256(array.tobytes()).hexdigest()])
print(json.dumps(digests))
"""


@pytest.mark.parametrize("framework", ["mxnet", "torch"])
def test_same_seed_gives_identical_input_values_in_two_processes(framework: str) -> None:
    """Not only the shapes: the values. ``exp`` is one-to-one, so equal outputs are equal inputs."""

    def digests() -> list[list[object]]:
        done = subprocess.run(
            [sys.executable, "-c", VALUES, framework], capture_output=True, text=True, check=True, timeout=120
        )
        return json.loads(done.stdout.strip().splitlines()[-1])

    first, second = digests(), digests()
    assert first == second and len(first) == 3
    assert len({digest for _, digest in first}) == 3  # three drawn inputs, not one


def _torch_specs(ops: list[str], seed: int = 0, **factors: object) -> dict[str, list[dict[str, object]]]:
    backend = get_backend("torch")
    config = SweepConfig(options=RunOptions(framework="torch", seed=seed), factors=SweepFactors(**factors))
    return {
        op.name: [s.describe_inputs() for s in specs_for(op, config, backend)]
        for op in select_operators(backend, ops, ())
    }


def test_adding_an_operator_leaves_the_others_shapes_unchanged() -> None:
    alone = _torch_specs(["relu"], shapes="fuzz", fuzz_count=6, seed=5)
    together = _torch_specs(["relu", "add", "sum"], shapes="fuzz", fuzz_count=6, seed=5)
    assert alone["relu"] == together["relu"]
    other_seed = _torch_specs(["relu"], shapes="fuzz", fuzz_count=6, seed=6)
    assert other_seed["relu"] != alone["relu"]
    assert operator_seed(5, "relu") != operator_seed(5, "add")


def test_torch_draws_non_contiguous_inputs_and_broadcast_partners() -> None:
    specs = _torch_specs(["add"], shapes="fuzz", fuzz_count=12, seed=1)["add"]
    assert any(inputs["input"].get("storage") == "sliced" for inputs in specs)
    partners = [(i["input"]["shape"], i["other"]["shape"]) for i in specs]
    assert any(a != b for a, b in partners)
    for first, second in partners:
        assert all(y in (1, x) for x, y in zip(first, second, strict=True))


@pytest.mark.parametrize("mode", ["fuzz", "skewed"])
def test_caps_hold_and_regimes_are_spanned(mode: str) -> None:
    constraints = ShapeConstraints(rank=3, broadcast=True)
    drawn = [s for op in ("a", "b", "c", "d") for s in draw_shapes(op, 0, 9, mode, constraints, 10_000)]
    assert all(1 <= s.elements <= 10_000 for s in drawn)
    assert all(math.prod(s.partner) <= s.elements for s in drawn)
    uncapped = [s for op in ("a", "b") for s in draw_shapes(op, 0, 9, mode, constraints, 2**40)]
    assert {s.regime for s in uncapped} == set(REGIMES)
    assert all(s.elements < 2 * REGIMES[s.regime][1] for s in uncapped)
    assert any(s.elements > REGIMES["cache"][1] for s in uncapped)


def test_memory_cap_scales_with_available_memory() -> None:
    assert memory_cap_elements(64 * 4 * 1000, 4, 10**9) == 1000
    assert memory_cap_elements(None, 4, 123) == 123
    assert memory_cap_elements(1, 8, 10**9) == 1


def test_skewed_shapes_put_nearly_all_elements_in_one_dimension() -> None:
    drawn = draw_shapes("relu", 3, 9, "skewed", ShapeConstraints(rank=3), 2**30)
    for shape in drawn:
        assert max(shape.shape) * 4 >= shape.elements  # the others together are at most 2 x 2


def test_fixed_dimensions_of_a_rule_hold() -> None:
    constraints = base_constraints(STANDARD, "image", broadcast=False)
    assert constraints == ShapeConstraints(rank=3, fixed=((2, 3),))
    assert all(s.shape[2] == 3 for s in draw_shapes("resize", 0, 6, "fuzz", constraints, 2**30))


def test_unknown_shape_mode_is_refused() -> None:
    with pytest.raises(OpperfError, match="shape mode"):
        SweepFactors(shapes="random").validated("mxnet")
    with pytest.raises(OpperfError, match="fuzz_count"):
        SweepFactors(fuzz_count=0).validated("mxnet")


def test_report_shows_time_per_element_for_fuzzed_records() -> None:
    result = {
        "framework": "mxnet",
        "op": "relu",
        "status": "ok",
        "inputs": {"data": {"shape": [1000, 10]}},
        "forward": {"samples_s": [1e-5] * 5},
        "backward": None,
        "namespace": "mx.nd",
        "category": "unary",
    }
    smaller = {**result, "inputs": {"data": {"shape": [10, 10]}}}
    document = {
        "environment": {"shapes": "fuzz", "shapes_checksum": "ab" * 32},
        "results": [result, smaller],
    }
    text = render_markdown(document)
    section = text.split("## Shape sensitivity")[1]
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| relu")
    ]
    assert rows == [
        ["relu", "10x10", "100", "contiguous", "0.0100", "100"],
        ["relu", "1000x10", "10000", "contiguous", "0.0100", "1"],
    ]
    standard = render_markdown({**document, "environment": {"shapes": "standard"}})
    assert "Shape sensitivity" not in standard


def test_standard_shapes_are_unchanged_by_the_option() -> None:
    assert _torch_specs(["relu"]) == _torch_specs(["relu"], shapes="standard", fuzz_count=9, seed=4)
    assert replace(SweepFactors(), shapes="fuzz").shapes == "fuzz"


@pytest.mark.parametrize("op", ["matmul", "lax.dot_general", "einsum", "kron", "outer", "lax.batch_matmul"])
def test_jax_matrix_products_draw_their_sizes_under_fuzz(op: str) -> None:
    """JAX's products sized their operands from fixed constants: under --shapes fuzz each kept the
    standard profile's one configuration, in a run recorded as fuzzed."""
    from opperf.operators.rules import FuzzSettings, fuzzed_inputs, inputs_for

    def shapes(configuration: dict) -> tuple:
        values = [
            v for value in configuration.values() for v in (value if isinstance(value, tuple) else (value,))
        ]
        return tuple(v.shape for v in values if hasattr(v, "shape"))

    found = {o.name: o for o in get_backend("jax").operators()}[op]
    standard = {shapes(c) for c in inputs_for(found, STANDARD, "cpu")}
    drawn = {shapes(c) for c in fuzzed_inputs(found, STANDARD, "cpu", FuzzSettings("fuzz", 0, 5, 10**8))}
    assert len(drawn) >= 4 and len(drawn - standard) >= 3, drawn
