"""Markers for tests whose expectation depends on how MXNet was built."""

import mxnet as mx
import pytest

_features = mx.runtime.Features()

cpu_only_build = pytest.mark.skipif(
    _features.is_enabled("CUDA"), reason="expects the message of an MXNet build without CUDA"
)
int32_only_build = pytest.mark.skipif(
    _features.is_enabled("INT64_TENSOR_SIZE"),
    reason="expects the message of an MXNet build without int64 tensors",
)
