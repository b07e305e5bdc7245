from opperf.operators.info import ArgKind, parse_argument


def test_required_shape():
    arg = parse_argument("kernel", "Shape(tuple), required")
    assert (arg.kind, arg.required, arg.default) == (ArgKind.SHAPE, True, None)


def test_optional_int_default_is_parsed():
    arg = parse_argument("axis", "int, optional, default='-1'")
    assert (arg.kind, arg.required, arg.default) == (ArgKind.INT, False, -1)


def test_nullable_shape():
    arg = parse_argument("axis", "Shape or None, optional, default=None")
    assert arg.kind is ArgKind.SHAPE and arg.nullable and arg.default is None


def test_choice_with_none():
    arg = parse_argument("dtype", "{None, 'float16', 'float32', 'float64'},optional, default='None'")
    assert arg.kind is ArgKind.CHOICE
    assert arg.choices == (None, "float16", "float32", "float64")
    assert arg.nullable


def test_tensor_and_tensor_list():
    assert parse_argument("data", "NDArray-or-Symbol").kind is ArgKind.TENSOR
    assert parse_argument("data", "NDArray-or-Symbol[]").kind is ArgKind.TENSOR_LIST


def test_tuple_of_floats_default():
    arg = parse_argument("scale", "tuple of <float>, optional, default=[1.0, 1.0]")
    assert arg.kind is ArgKind.FLOAT_TUPLE and arg.default == [1.0, 1.0]


def test_boolean_default_text():
    arg = parse_argument("keepdims", "boolean, optional, default=0")
    assert arg.kind is ArgKind.BOOL and arg.default is False
    assert parse_argument("flag", "boolean, optional, default=1").default is True


def test_unknown_type_is_other():
    assert parse_argument("src", "ptr, required").kind is ArgKind.OTHER
