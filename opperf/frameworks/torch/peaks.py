"""PyTorch's own float32 compute rate, one candidate for the machine's compute roof
(``opperf.measure.roofline.peaks``): the best of a matrix product and the convolutions ``PROBE_CONVOLUTIONS``
lists. Run as a child (``opperf.frameworks.gemm_rates``) with the matrix size and the repeats, on
every CPU this process may use, it prints one JSON object: ``{"gemm_flops_per_s": ..., "method": ...}``."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

from opperf.measure.roofline.peaks import PROBE_CONVOLUTIONS, best_rate, convolution_flops
from opperf.utils.affinity import available_cpus
from opperf.utils.words import counted


def _kernels(size: int) -> dict[str, tuple[Callable[[], object], int]]:
    """Each probed kernel by name: the call and its FLOPs."""
    import torch

    generator = torch.Generator().manual_seed(0)
    a, b = (torch.rand((size, size), generator=generator) for _ in range(2))
    kernels: dict[str, tuple[Callable[[], object], int]] = {
        f"matmul {size}x{size}": (lambda: torch.matmul(a, b), 2 * size**3)
    }
    for shape, filters, kernel in PROBE_CONVOLUTIONS:
        data = torch.rand(shape, generator=generator)
        weight = torch.rand((filters, shape[1], *kernel), generator=generator)
        convolution = torch.nn.functional.conv2d if len(kernel) == 2 else torch.nn.functional.conv3d

        def convolve(data=data, weight=weight, convolution=convolution, padding=kernel[0] // 2) -> object:
            return convolution(data, weight, padding=padding)

        name = f"conv{len(kernel)}d {'x'.join(map(str, shape))} {'x'.join(map(str, kernel))}"
        kernels[name] = (convolve, convolution_flops(shape, filters, kernel))
    return kernels


def measure(size: int, repeats: int) -> dict[str, object]:
    import torch

    torch.set_num_threads(len(available_cpus()))
    kernels = _kernels(size)
    best, rate = best_rate(kernels, repeats)
    threads = counted(torch.get_num_threads(), "thread")
    return {
        "gemm_flops_per_s": rate,
        "method": f"torch {torch.__version__} {best} (best of {', '.join(kernels)}), {threads}",
    }


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]), int(sys.argv[2]))))
