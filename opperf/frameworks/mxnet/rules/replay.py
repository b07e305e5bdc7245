"""What an MXNet configs file may choose when it is replayed (``opperf.operators.rules.replay``), as data."""

from __future__ import annotations

from opperf.operators.rules.replay import ReplayPolicy

REPLAY_POLICY = ReplayPolicy(
    tensor_dtypes=frozenset(
        {"float16", "bfloat16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool"}
    ),
    storages=frozenset({"default", "csr", "row_sparse"}),
    # ``string`` arguments whose text is data: a reshape's order, an einsum's subscripts.
    text_arguments=frozenset({"UPLO", "mode", "order", "reflect_type", "subscripts"}),
    # Arguments the registry leaves untyped that take numbers (NumPy-style operators' parameters).
    numeric_arguments=frozenset({"M", "a", "pvals", "range", "size", "pad_width", "src"}),
    # A device, a file, a C pointer, a synchronisation key, a registered CustomOp's name.
    resources=frozenset({"ctx", "filename", "info", "key", "op_type"}),
    # Without the large-tensor profile (which replay does not use), MXNet indexes with 32 bits.
    max_elements=2**31 - 1,
)
