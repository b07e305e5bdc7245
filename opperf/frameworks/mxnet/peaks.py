"""MXNet's own float32 matrix product rate, one candidate for the machine's compute roof
(``opperf.utils.peaks``): NumPy's BLAS is often not what a framework's kernels reach (oneDNN's
convolution read 263% of an OpenBLAS roof). Run as a child (``opperf.frameworks.gemm_rates``) with
the matrix size and the repeats, on MXNet's own thread count, it prints one JSON object:
``{"gemm_flops_per_s": ..., "method": ...}``."""

from __future__ import annotations

import json
import sys
import time

from opperf.utils.peaks import best_time


def measure(size: int, repeats: int) -> dict[str, object]:
    import mxnet as mx

    a = mx.nd.random.uniform(shape=(size, size), dtype="float32")
    b = mx.nd.random.uniform(shape=(size, size), dtype="float32")
    product = mx.nd.empty((size, size), dtype="float32")

    def multiply() -> None:
        mx.nd.dot(a, b, out=product)
        product.wait_to_read()

    seconds = best_time(multiply, repeats, time.perf_counter)
    return {"gemm_flops_per_s": 2 * size**3 / seconds, "method": f"mxnet {mx.__version__} nd.dot"}


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]), int(sys.argv[2]))))
