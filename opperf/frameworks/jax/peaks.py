"""JAX's own float32 compute rate, one candidate for the machine's compute roof
(``opperf.measure.roofline.peaks``): a jitted matrix product. Run as a child
(``opperf.frameworks.gemm_rates``) with the matrix size and the repeats, on every CPU this process
may use, it prints one JSON object: ``{"gemm_flops_per_s": ..., "method": ...}``. It starts JAX's
CPU backend alone (``JAX_PLATFORMS=cpu``): where JAX has CUDA its arrays would go to the GPU, whose
rate is no CPU roof, and starting the GPU backend takes 75% of the GPU's memory while it runs."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

from opperf.measure.roofline.peaks import best_rate


def _kernels(size: int) -> dict[str, tuple[Callable[[], object], int]]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    generator = np.random.default_rng(0)
    a, b = (jnp.asarray(generator.uniform(size=(size, size)).astype(np.float32)) for _ in range(2))
    product = jax.jit(jnp.matmul)
    product(a, b).block_until_ready()
    return {f"matmul {size}x{size}": (lambda: product(a, b).block_until_ready(), 2 * size**3)}


def measure(size: int, repeats: int) -> dict[str, object]:
    import jax

    kernels = _kernels(size)
    best, rate = best_rate(kernels, repeats)
    return {
        "gemm_flops_per_s": rate,
        "method": f"jax {jax.__version__} {best} (jit, {jax.default_backend()})",
    }


if __name__ == "__main__":
    os.environ["JAX_PLATFORMS"] = "cpu"  # before JAX starts: the CPU's roof, and the GPU left alone
    print(json.dumps(measure(int(sys.argv[1]), int(sys.argv[2]))))
