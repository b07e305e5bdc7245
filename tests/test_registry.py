"""Registry introspection against real MXNet 1.9.1."""

from opperf.frameworks.mxnet.categories import CATEGORY_NAMES
from opperf.frameworks.mxnet.registry import exposure, is_backward_name, load_registry
from opperf.operators import fused, longtail
from opperf.operators.info import ArgKind


def test_every_registered_name_is_accounted_for():
    registry = load_registry()
    assert len(registry.registered_names) == 1167
    forward = {n for n in registry.registered_names if not is_backward_name(n)}
    covered = {name for op in registry.operators for name in op.all_names}
    # Each forward name belongs to exactly one operator; backward names to none.
    assert covered == forward
    assert sum(len(op.all_names) for op in registry.operators) == len(forward)


def test_distinct_operator_count():
    # 621 canonical names; 10 of them are backward operators named _npi_backward_*, *_backward, ...
    registry = load_registry()
    assert len(registry.operators) == 611


def test_aliases_fold_into_canonical_operator(registry):
    concat = registry["Concat"]
    assert {"concat", "_sparse_concat"} <= set(concat.aliases)
    assert "concat" not in registry
    assert registry["Reshape"].aliases == ("reshape",)


def test_namespaces_from_prefixes(registry):
    assert registry["Convolution"].namespaces[0] == "mx.nd"
    assert "mx.npx" in registry["Convolution"].namespaces
    assert registry["_contrib_box_nms"].namespaces[0] == "mx.nd.contrib"
    assert registry["_npi_add"].namespaces == ("mx.np",)
    assert registry["_copyto"].namespaces[0] == "mx.nd._internal"
    assert exposure("_np_sum") == ("mx.np", "mxnet.ndarray.numpy._op", "sum")
    assert exposure("_linalg_gemm2") == ("mx.nd.linalg", "mxnet.ndarray.linalg", "gemm2")


def test_arguments_parsed_with_kinds(registry):
    arguments = {a.name: a for a in registry["Convolution"].arguments}
    assert arguments["data"].kind is ArgKind.TENSOR
    assert arguments["kernel"].kind is ArgKind.SHAPE and arguments["kernel"].required
    assert arguments["num_filter"].kind is ArgKind.INT and arguments["num_filter"].required
    assert arguments["no_bias"].kind is ArgKind.BOOL and arguments["no_bias"].default is False
    assert registry["Concat"].var_args_key == "num_args"


def test_backward_detection_from_registry(registry):
    assert registry["Convolution"].has_backward
    assert registry["broadcast_add"].has_backward
    assert not registry["_random_uniform"].has_backward
    assert not registry["argsort"].has_backward


def test_every_operator_has_a_known_category(registry):
    assert {op.category for op in registry.values()} <= {*CATEGORY_NAMES, longtail.CATEGORY, fused.CATEGORY}
    assert registry["broadcast_add"].category == "binary_broadcast"
    assert registry["Pooling"].category == "pooling"
    assert registry["exp"].category == "unary"
    assert registry["sum"].category == "reduction"
