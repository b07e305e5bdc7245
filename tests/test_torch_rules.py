"""PyTorch input rules: every operator gets inputs or a stated reason, and the inputs fit the schema."""

import contextlib
from dataclasses import replace

import pytest

from opperf.frameworks.torch.rules.skips import DEVICE_SKIP_REASONS, SKIP_REASONS
from opperf.operators.info import ArgKind, Argument
from opperf.operators.rules import NoRuleError, inputs_for
from opperf.operators.rules.profiles import INT64, SMALL
from opperf.results.measurement import TensorSpec

pytest.importorskip("torch")

# Python wrappers whose parameters differ from the aten schema's (``tensordot(a, b, dims)``).
# Arguments the public Python entry point takes beyond the aten schema.
PYTHON_WRAPPER_ARGUMENTS = {
    "tensordot": {"dims"},
    "max_unpool2d": {"kernel_size", "stride"},
    "max_unpool3d": {"kernel_size"},
}


@pytest.fixture(scope="module")
def torch_ops():
    from opperf.frameworks.torch.registry import load_registry

    return load_registry().by_name


def test_every_operator_gets_inputs_in_schema_order_or_a_reason(torch_ops):
    for op in set(torch_ops.values()):
        try:
            configurations = inputs_for(op, SMALL, "cpu")
        except NoRuleError as reason:
            assert str(reason), op.name
            continue
        assert configurations, op.name
        names = [a.name for a in op.arguments]
        for config in configurations:
            extra = set(config) - set(names) - PYTHON_WRAPPER_ARGUMENTS.get(op.name, set())
            assert not extra, f"{op.name} takes no {extra}"
            known = [name for name in config if name in names]
            assert known == sorted(known, key=names.index), op.name
            required = {a.name for a in op.arguments if a.required} - PYTHON_WRAPPER_ARGUMENTS.keys()
            assert required <= set(config) or op.name in PYTHON_WRAPPER_ARGUMENTS, op.name


def test_binary_operators_take_the_profiles_broadcast_pairs(torch_ops):
    configurations = inputs_for(torch_ops["add"], SMALL, "cpu")
    pairs = [(c["input"].shape, c["other"].shape) for c in configurations]
    assert pairs == list(SMALL.broadcast_pairs)
    assert all("alpha" not in c for c in configurations)  # optional arguments keep their defaults


def test_convolution_is_sized_by_the_layer_profile(torch_ops):
    (config,) = inputs_for(torch_ops["conv2d"], SMALL, "cpu")
    layers = SMALL.layers
    image = (layers.batch, layers.channels, layers.spatial, layers.spatial)
    assert config["input"] == TensorSpec(image)
    assert config["weight"].shape == (2 * layers.channels, layers.channels, 3, 3)
    assert config["bias"].shape == (2 * layers.channels,)
    assert config["padding"] == (1, 1)


def test_gather_indices_are_in_bounds_integers(torch_ops):
    for config in inputs_for(torch_ops["gather"], SMALL, "cpu"):
        index, data = config["index"], config["input"]
        assert index.integral and index.dtype == "int64"
        assert index.shape == data.shape and (index.low, index.high) == (0, data.shape[0])
        assert config["dim"] == 0


def test_factorizations_get_structured_square_matrices(torch_ops):
    (config,) = inputs_for(torch_ops["linalg_cholesky"], SMALL, "cpu")
    assert config["input"].structure == "spd"
    assert config["input"].shape == (SMALL.layers.features,) * 2
    (config,) = inputs_for(torch_ops["linalg_solve_triangular"], SMALL, "cpu")
    assert config["input"].structure == "lower_triangular" and config["upper"] is False


def test_bitwise_operators_get_integer_tensors(torch_ops):
    for config in inputs_for(torch_ops["bitwise_and"], SMALL, "cpu"):
        assert config["input"].dtype == config["other"].dtype == "int64"


def test_an_unsatisfiable_schema_names_the_argument(torch_ops):
    stream = Argument("stream", ArgKind.OTHER, required=True, type_string="Stream")
    op = replace(torch_ops["abs"], name="abs_on_stream", arguments=(*torch_ops["abs"].arguments, stream))
    with pytest.raises(NoRuleError, match=r"required argument 'stream' \(Stream\)"):
        inputs_for(op, SMALL, "cpu")


def test_skips_are_data_and_device_specific(torch_ops):
    with pytest.raises(NoRuleError, match="stream"):
        inputs_for(torch_ops["record_stream"], SMALL, "cpu")
    assert "record_stream" in SKIP_REASONS
    with pytest.raises(NoRuleError, match="CPU"):
        inputs_for(torch_ops["cudnn_convolution"], SMALL, "cpu")
    assert "cudnn_convolution" in DEVICE_SKIP_REASONS["cpu"]
    assert "cudnn_convolution" not in DEVICE_SKIP_REASONS.get("gpu", {})


def test_a_profile_without_layer_sizes_has_no_layer_configuration(torch_ops):
    with pytest.raises(NoRuleError, match="int64"):
        inputs_for(torch_ops["conv2d"], INT64, "cpu")


def test_every_rule_gives_inputs_or_a_reason_in_both_profiles_and_device_kinds(torch_ops):
    """No rule raises anything but NoRuleError (a sweep records any other error as a failure)."""
    for op in set(torch_ops.values()):
        for profile in (SMALL, INT64):
            for kind in ("cpu", "gpu"):
                with contextlib.suppress(NoRuleError):
                    assert inputs_for(op, profile, kind)
