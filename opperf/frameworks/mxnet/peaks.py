"""MXNet's own float32 compute rate, one candidate for the machine's compute roof
(``opperf.measure.roofline.peaks``):
NumPy's BLAS is often not what a framework's kernels reach (oneDNN's convolutions read 263% of an
OpenBLAS roof). The probe is the best of a matrix product and the convolutions ``PROBE_CONVOLUTIONS``
lists. Run as a child (``opperf.frameworks.gemm_rates``) with the matrix size and the repeats, on the
OpenMP threads the parent sets, it prints one JSON object: ``{"gemm_flops_per_s": ..., "method": ...}``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

from opperf.measure.roofline.peaks import PROBE_CONVOLUTIONS, best_rate, convolution_flops


def _kernels(size: int) -> dict[str, tuple[Callable[[], object], int]]:
    """Each probed kernel by name: the call (synchronised) and its FLOPs."""
    import mxnet as mx

    a, b = (mx.nd.random.uniform(shape=(size, size)) for _ in range(2))
    kernels = {f"nd.dot {size}x{size}": (lambda: mx.nd.dot(a, b).wait_to_read(), 2 * size**3)}
    for shape, filters, kernel in PROBE_CONVOLUTIONS:
        data = mx.nd.random.uniform(shape=shape)
        weight = mx.nd.random.uniform(shape=(filters, shape[1], *kernel))
        options = {
            "kernel": kernel,
            "pad": tuple(k // 2 for k in kernel),
            "num_filter": filters,
            "no_bias": True,
        }

        def convolve(data=data, weight=weight, options=options) -> None:
            mx.nd.Convolution(data, weight, **options).wait_to_read()

        name = f"Convolution {'x'.join(map(str, shape))} {'x'.join(map(str, kernel))}"
        kernels[name] = (convolve, convolution_flops(shape, filters, kernel))
    return kernels


def measure(size: int, repeats: int) -> dict[str, object]:
    import mxnet as mx

    kernels = _kernels(size)
    best, rate = best_rate(kernels, repeats)
    threads = os.environ.get("OMP_NUM_THREADS", "MXNet's default")
    method = f"mxnet {mx.__version__} {best} (best of {', '.join(kernels)}), OMP_NUM_THREADS {threads}"
    return {"gemm_flops_per_s": rate, "method": method}


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]), int(sys.argv[2]))))
