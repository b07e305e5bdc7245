"""PyTorch's own float32 matrix product rate, one candidate for the machine's compute roof
(``opperf.utils.peaks``). Run as a child (``opperf.frameworks.gemm_rates``) with the matrix size and
the repeats, on PyTorch's own thread count, it prints one JSON object:
``{"gemm_flops_per_s": ..., "method": ...}``."""

from __future__ import annotations

import json
import sys
import time

from opperf.utils.peaks import best_time


def measure(size: int, repeats: int) -> dict[str, object]:
    import torch

    generator = torch.Generator().manual_seed(0)
    a = torch.rand((size, size), generator=generator)
    b = torch.rand((size, size), generator=generator)
    product = torch.empty((size, size))
    seconds = best_time(lambda: torch.matmul(a, b, out=product), repeats, time.perf_counter)
    method = f"torch {torch.__version__} matmul, {torch.get_num_threads()} threads"
    return {"gemm_flops_per_s": 2 * size**3 / seconds, "method": method}


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]), int(sys.argv[2]))))
