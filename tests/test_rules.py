"""Input rules: every category yields runnable configurations, hand-written defaults cover layers."""

import pytest

from opperf.frameworks.mxnet.categories import CATEGORY_NAMES
from opperf.frameworks.mxnet.invoke import GRAPH_BUILDERS
from opperf.frameworks.mxnet.rules.skips import SKIP_REASONS
from opperf.operators.rules import NoRuleError, distinct, inputs_for
from opperf.operators.rules.profiles import INT64, SMALL
from opperf.results.measurement import TensorSpec


def _configurations(op):
    try:
        return inputs_for(op, SMALL)
    except NoRuleError:
        return None


@pytest.mark.parametrize("category", CATEGORY_NAMES)
def test_each_category_has_operators_with_configurations(category, registry):
    members = [op for op in registry.values() if op.category == category]
    if not members:
        pytest.skip(f"no operator of this MXNet build falls in {category}")
    derived = [(op, _configurations(op)) for op in members]
    ruled = [(op, configs) for op, configs in derived if configs]
    skipped_by_design = all(op.name in SKIP_REASONS for op, configs in derived if not configs)
    assert ruled or skipped_by_design, f"no operator in {category} gets inputs"
    for op, configs in ruled:
        if op.name in GRAPH_BUILDERS:
            continue  # the graph built around the node sets its attributes (subgraph locations, ...)
        for config in configs:
            # Every required scalar is supplied (variable-length counts are filled in at call time;
            # the registry calls every tensor required, optional ones too).
            required = {a.name for a in op.arguments if a.required and not a.is_tensor}
            missing = required - {op.var_args_key} - set(config)
            assert not missing, f"{op.name} lacks {missing}"


def test_unary_gets_one_configuration_per_profile_shape(registry):
    configs = inputs_for(registry["exp"], SMALL)
    assert [c["data"].shape for c in configs] == list(SMALL.shapes)


def test_broadcast_pairs_drive_binary_operators(registry):
    configs = inputs_for(registry["broadcast_add"], SMALL)
    assert [(c["lhs"].shape, c["rhs"].shape) for c in configs] == list(SMALL.broadcast_pairs)


def test_pooling_defaults_cover_dimensions_and_types(registry):
    configs = inputs_for(registry["Pooling"], SMALL)
    kinds = {(len(c["data"].shape) - 2, c.get("pool_type", "global")) for c in configs}
    assert {(d, t) for d in (1, 2, 3) for t in ("max", "avg", "sum")} <= kinds


def test_rnn_defaults_cover_every_mode(registry):
    modes = {c["mode"] for c in inputs_for(registry["RNN"], SMALL)}
    assert modes == {"rnn_relu", "rnn_tanh", "lstm", "gru"}


def test_index_arguments_stay_in_bounds(registry):
    for config in inputs_for(registry["take"], SMALL):
        rows = config["a"].shape[0]
        indices = config["indices"]
        assert isinstance(indices, TensorSpec) and indices.integral
        assert indices.low >= 0 and indices.high <= rows


def test_skipped_operators_give_a_reason(registry):
    with pytest.raises(NoRuleError, match="pointer"):
        inputs_for(registry["_NDArray"], SMALL)


def test_int64_profile_has_no_layer_configuration(registry):
    with pytest.raises(NoRuleError, match="int64"):
        inputs_for(registry["Convolution"], INT64)
    big = inputs_for(registry["exp"], INT64)[0]["data"]
    assert big.size > 2**32


@pytest.mark.parametrize("name", ["_npi_normal", "_npi_uniform", "_npi_exponential", "_npi_bernoulli"])
def test_samplers_draw_an_array_not_one_value(name, registry):
    # Given their parameters as scalars and no size, MXNet's samplers draw one value, whatever the
    # profile's shape: every configuration was the same one-value draw.
    (config,) = inputs_for(registry[name], SMALL)
    assert len(config["size"]) == 2 and min(config["size"]) > 1


@pytest.mark.parametrize(("name", "extent"), [("_eye", "N"), ("_npi_eye", "N"), ("_npi_arange", "stop")])
def test_creation_operators_are_sized_by_the_profile(name, extent, registry):
    (config,) = inputs_for(registry[name], SMALL)
    assert config[extent] > 1


@pytest.mark.parametrize("framework", ["mxnet", "torch"])
def test_a_rule_that_repeats_a_configuration_gives_it_once(framework):
    from opperf.frameworks import get_backend
    from opperf.results.options import RunOptions
    from opperf.sweep.run import SweepConfig, select_operators, specs_for

    # One spec per configuration for every operator (MXNet's samplers, eye and arange and 21 torch
    # operators repeated theirs), also after MXNet drops the tensors an operator ignores: a result
    # file holds one record per configuration, and `opperf diff` refuses repeats.
    backend = get_backend(framework)
    config = SweepConfig(options=RunOptions(framework=framework))
    repeated = []
    for op in select_operators(backend, (), ()):
        try:
            specs = specs_for(op, config, backend)
        except NoRuleError:
            continue
        if len({(repr(spec.inputs), spec.stage, spec.variant) for spec in specs}) != len(specs):
            repeated.append(op.name)
    assert not repeated
    assert distinct([{"n": 1}, {"n": 2}, {"n": 1}]) == [{"n": 1}, {"n": 2}]
