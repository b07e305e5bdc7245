"""What a PyTorch configs file may choose when it is replayed (``opperf.operators.rules.replay``), as data."""

from __future__ import annotations

from typing import get_args

from opperf.operators.rules.replay import ReplayPolicy
from opperf.results.measurement import Storage

DTYPES = frozenset(
    {
        "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
        "uint8", "int8", "int16", "int32", "int64", "bool", "quint8", "qint8", "qint32",
    }
)  # fmt: skip
"""The tensor dtypes a file may name (and a ``ScalarType`` argument may take)."""

REPLAY_POLICY = ReplayPolicy(
    tensor_dtypes=DTYPES,
    storages=frozenset(get_args(Storage)),
    # Schema ``str`` arguments whose text is data: a decomposition's triangle, an algorithm's name.
    text_arguments=frozenset(
        {
            "UPLO",
            "approximate",
            "driver",
            "equation",
            "indexing",
            "interpolation",
            "mode",
            "norm",
            "ord",
            "pad_mode",
            "padding",
            "padding_side",
            "reduce",
            "rounding_mode",
            "side",
        }
    ),  # fmt: skip
    constants={
        "ScalarType": DTYPES,
        "Layout": frozenset(
            {"strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"}
        ),
        "MemoryFormat": frozenset(
            {"contiguous_format", "preserve_format", "channels_last", "channels_last_3d"}
        ),
    },
    # A file, a device, memory pinned or shared with a file, a random generator, a stream, storage.
    resources=frozenset(
        {"filename", "device", "device_type", "pin_memory", "shared", "generator", "s", "source"}
    ),
)
