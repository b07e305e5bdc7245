"""MXNet's own command-line flags: its execution engine, which MXNet reads when it is imported."""

from __future__ import annotations

import os
import sys

from opperf.frameworks import FrameworkFlag
from opperf.utils.errors import OpperfError

ENGINES = {"threaded": "ThreadedEnginePerDevice", "naive": "NaiveEngine"}


def select_engine(name: str) -> None:
    """Run MXNet (in this process and in workers started later) with the engine ``name``."""
    engine = ENGINES[name]
    if "mxnet" in sys.modules and os.environ.get("MXNET_ENGINE_TYPE", ENGINES["threaded"]) != engine:
        raise OpperfError(
            f"--engine: MXNet is already imported with another engine; set MXNET_ENGINE_TYPE={engine}"
        )
    os.environ["MXNET_ENGINE_TYPE"] = engine


FLAGS: tuple[FrameworkFlag, ...] = (
    FrameworkFlag(
        "--engine",
        "MXNet's execution engine (default: MXNET_ENGINE_TYPE, else threaded); naive runs each operator "
        "synchronously in the calling thread, without the engine's cross-thread hand-off",
        tuple(sorted(ENGINES)),
        select_engine,
    ),
)
