"""PyTorch cases for ``benchmarks.agreement``: operators, and ``torch.utils.benchmark`` as reference.

Everything runs at one thread (opperf's and the reference's), the setting whose timings repeat on a
machine whose other core may be busy.
"""

from __future__ import annotations

from benchmarks.agreement import REFERENCE_MIN_TIME_S, Case

THREADS = 1


def torch_cases() -> list[Case]:
    """The operators compared, with opperf's thread count set to the reference's."""
    import torch
    from torch.nn import functional

    from opperf.frameworks import get_backend

    get_backend("torch").set_threads(THREADS)
    square, images = (1024, 1024), (32, 16, 32, 32)
    return [
        Case("add", torch.add, {"input": square, "other": square}, "torch"),
        Case("mul", torch.mul, {"input": square, "other": square}, "torch"),
        Case("exp", torch.exp, {"input": square}, "torch"),
        Case("sum", torch.sum, {"input": square}, "torch"),
        Case("softmax", torch.softmax, {"input": square, "dim": 1}, "torch"),
        Case("mm", torch.mm, {"input": (512, 512), "mat2": (512, 512)}, "torch"),
        Case(
            "conv2d",
            functional.conv2d,
            {"input": images, "weight": (32, 16, 3, 3), "bias": (32,)},
            "torch",
        ),
        Case("max_pool2d", functional.max_pool2d, {"input": images, "kernel_size": (2, 2)}, "torch"),
    ]


def torch_reference(case: Case, runs: int) -> float:
    """``torch.utils.benchmark``'s median for the call, on uniform [0.1, 1) inputs (``runs`` unused: the
    Timer chooses its own block size)."""
    import torch
    from torch.utils import benchmark

    arguments = {
        name: torch.rand(value) * 0.9 + 0.1 if isinstance(value, tuple) and name != "kernel_size" else value
        for name, value in case.inputs.items()
    }
    timer = benchmark.Timer(
        "function(**arguments)",
        globals={"function": case.function, "arguments": arguments},
        num_threads=THREADS,
    )
    return timer.blocked_autorange(min_run_time=REFERENCE_MIN_TIME_S).median
