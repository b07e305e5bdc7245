"""PyTorch's graph and compile stages: a prepared call captured by ``torch.jit`` or compiled by
``torch.compile`` (inductor), or replayed from a CUDA graph, timed once, and checked against eager.

``graph`` scripts a long-tail operator's Python (``torch.jit.script``: loops and branches stay code)
and traces an aten operator's call (``torch.jit.trace``: there is no Python to script). ``compile``
compiles the call with ``torch.compile`` after resetting dynamo, so each configuration compiles
afresh (and no configuration meets dynamo's recompilation limit); inductor's cache goes to a folder
of this process under opperf's cache (``claim_compile_cache``), removed when the process ends, so every
``compile_s`` is a cold compile and the disk does not fill (the cache reached 151 MB in a few
experiments). Before the first compile of a process inductor is warmed up once (``warm_up_compiler``), so
that compile's ``compile_s`` is its operator's and not inductor starting. ``cudagraph`` (a GPU only)
captures ``CUDA_GRAPH_CALLS`` calls in one CUDA graph and replays it: the harness divides each sample
by that many calls, which is the operator's time without launch gaps (nvbench's "batch GPU time").
Whatever a stage cannot take is a ``SkipError`` with the stage's own error.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from opperf.frameworks.torch.calls import Call
from opperf.frameworks.torch.errors import describe_error
from opperf.measure.harness import SkipError
from opperf.measure.roofline.peaks import default_cache_dir
from opperf.measure.stages import StageCheck, compare

CACHE_VARIABLE = "TORCHINDUCTOR_CACHE_DIR"


@dataclass(frozen=True)
class Staged:
    """The input sets' calls as the stage runs them, the seconds capturing or compiling took (with the
    first call), the stage's outputs against eager, and how many of the operator's calls one staged
    call runs (a CUDA graph replays ``CUDA_GRAPH_CALLS``)."""

    calls: tuple[Call, ...]
    compile_s: float
    check: StageCheck
    calls_per_call: int = 1


CUDA_GRAPH_CALLS = 20
"""Calls of the operator one CUDA graph captures: a replay is one launch for all of them, so the
per-call time is the replay's over this many, free of launch gaps."""
NOT_ON_GPU = "cudagraph stage: CUDA graphs need a GPU; run it with --ctx gpu(0)"


def claim_compile_cache() -> Path:
    """Point inductor's cache at ``<opperf cache>/torch-compile/<pid>`` (or the user's
    ``TORCHINDUCTOR_CACHE_DIR``), removed when this process ends if it is opperf's; the folder in effect.

    A folder that cannot be written (a read-only home or ``XDG_CACHE_HOME``, common in CI) would fail
    every compile, and inductor then fails again on its own half-made state: a private folder in the
    temporary directory takes its place, removed at exit too.

    Called when the session starts: PyTorch fixes the variable to its default (``/tmp/torchinductor_<user>``,
    shared by every run and never cleaned) the first time any of its code asks, which the first eager
    measurement already does.
    """
    configured = os.environ.get(CACHE_VARIABLE)
    own = default_cache_dir() / "torch-compile" / str(os.getpid())
    fallback = Path(tempfile.gettempdir()) / f"opperf-torch-compile-{os.getpid()}"
    first = Path(configured) if configured else own
    folder = next((f for f in (first, fallback) if _writable_folder(f)), fallback)
    os.environ[CACHE_VARIABLE] = str(folder)
    if not configured or folder == fallback:
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def _writable_folder(folder: Path) -> bool:
    """Whether ``folder`` exists or can be made, and a file can be written in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def stage_calls(
    stage: str,
    op: str,
    calls: list[Call],
    script: Callable[..., object] | None,
    scope: Callable[[], contextlib.AbstractContextManager[object]],
    synchronize: Callable[[], None],
) -> Staged:
    """``calls`` run in ``stage``: ``script`` is the Python function ``torch.jit.script`` captures for
    the graph stage (None: trace the call instead). The first staged call runs under ``scope``, as the
    measured passes do; its outputs are compared with an eager call's."""
    import torch

    if stage == "cudagraph" and not _on_cuda(calls[0]):
        raise SkipError(NOT_ON_GPU)
    build = {
        "graph": _scripted if script is not None else _traced,
        "compile": _compiled,
        "cudagraph": _graphed,
    }[stage]
    if build is _compiled:
        warm_up_compiler()
    started = time.perf_counter()
    try:
        rebuild = build(script or calls[0].function, calls[0])
        with scope():
            outputs = rebuild(calls[0])()
        synchronize()
    except Exception as error:
        how = {
            _scripted: "torch.jit.script",
            _traced: "torch.jit.trace",
            _compiled: "torch.compile",
            _graphed: "a CUDA graph capture",
        }[build]
        raise SkipError(f"{stage} stage: {how} cannot take {op}: {describe_error(error)}") from error
    compile_s = time.perf_counter() - started
    with torch.no_grad():
        reference = calls[0]()
    check = compare(_arrays(reference, op), _arrays(outputs, op))
    per_call = CUDA_GRAPH_CALLS if build is _graphed else 1
    return Staged(tuple(rebuild(call) for call in calls), compile_s, check, per_call)


def _scripted(function: Callable[..., object], call: Call) -> Callable[[Call], Call]:
    import torch

    scripted = torch.jit.script(function)
    return lambda other: Call(scripted, other.args, other.kwargs)


@functools.cache
def warm_up_compiler() -> float:
    """Compile and run a one-addition function once per process; the seconds it took.

    The first compile of a process also pays for inductor starting (importing its passes, building its
    C++ toolchain check, starting its compile workers): 9.2 s for the first ``bbox2delta``
    configuration of a cold long-tail sweep on 2 cores, 0.9 and 1.2 s for the next two, which only
    change its shapes. Paid here, it is in no operator's ``compile_s``. An inductor that cannot compile
    fails here silently: the operator's own compile meets the same error and reports it.
    """
    import torch

    started = time.perf_counter()
    with contextlib.suppress(Exception):
        torch._dynamo.reset()
        torch.compile(lambda x: x + 1, backend="inductor", dynamic=False)(torch.ones(1))
    torch._dynamo.reset()
    return time.perf_counter() - started


def _compiled(function: Callable[..., object], call: Call) -> Callable[[Call], Call]:
    import torch

    torch._dynamo.reset()

    def forward(*args: object, **kwargs: object) -> object:
        return function(*args, **kwargs)

    compiled = torch.compile(forward, backend="inductor", dynamic=False)
    return lambda other: Call(compiled, other.args, other.kwargs)


def _graphed(function: Callable[..., object], call: Call) -> Callable[[Call], Call]:
    """A call that replays a CUDA graph of ``CUDA_GRAPH_CALLS`` calls of another (its inputs are the
    graph's: captured once, replayed as they are), returning the last captured call's outputs.
    Warmed up on a side stream first, as capture requires; captured without autograd (the stage
    measures forward calls)."""
    import torch

    def rebuild(other: Call) -> Call:
        with torch.no_grad():
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    other()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for _ in range(CUDA_GRAPH_CALLS):
                    outputs = other()

        def replay() -> object:
            graph.replay()
            return outputs

        return Call(replay, (), {})

    return rebuild


def _on_cuda(call: Call) -> bool:
    """Whether any of the call's tensors is on a CUDA device."""
    import torch

    values = (*call.args, *call.kwargs.values())
    tensors = [t for v in values for t in (v if isinstance(v, (list, tuple)) else (v,))]
    return any(isinstance(t, torch.Tensor) and t.is_cuda for t in tensors)


def _traced(function: Callable[..., object], call: Call) -> Callable[[Call], Call]:
    """A trace of ``call`` as a function of its tensors alone (the other arguments are fixed)."""
    import torch

    def tensors_of(other: Call) -> tuple:
        return tuple(v for v in (*other.args, *other.kwargs.values()) if isinstance(v, torch.Tensor))

    template = call

    def pure(*tensors: object) -> object:
        replacements = iter(tensors)
        args = tuple(next(replacements) if isinstance(v, torch.Tensor) else v for v in template.args)
        kwargs = {
            k: next(replacements) if isinstance(v, torch.Tensor) else v for k, v in template.kwargs.items()
        }
        return template.function(*args, **kwargs)

    traced = torch.jit.trace(pure, tensors_of(call), check_trace=False)
    return lambda other: Call(traced, tensors_of(other), {})


def _arrays(outputs: object, op: str) -> list:
    """The outputs as numpy arrays, for the check; an output that is none is a SkipError."""
    import torch

    if isinstance(outputs, (tuple, list)):
        return [array for item in outputs for array in _arrays(item, op)]
    if isinstance(outputs, torch.Tensor):
        try:
            return [outputs.detach().cpu().resolve_conj().numpy()]
        except Exception as error:
            raise SkipError(
                f"{op}'s outputs cannot be compared with eager: {describe_error(error)}"
            ) from error
    if isinstance(outputs, (bool, int, float)) or outputs is None:
        return [] if outputs is None else [outputs]
    raise SkipError(f"{op}'s outputs ({type(outputs).__name__}) cannot be compared with eager")
