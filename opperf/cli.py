"""``opperf``: sweep a framework's operator registry and write a report."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence

from opperf.backends import get_backend
from opperf.benchmark import PROFILERS, RunOptions
from opperf.errors import OpperfError
from opperf.nd_operations.categories import CATEGORIES
from opperf.report.csv_report import render_csv
from opperf.report.document import build_document
from opperf.report.json_report import render_json
from opperf.report.markdown import render_markdown
from opperf.rules.profiles import INT64, STANDARD
from opperf.sweep import SWEEP_RUNS, SWEEP_WARMUP, SweepConfig, run_sweep
from opperf.utils.memory import DTYPES

RENDERERS = {"json": render_json, "md": render_markdown, "csv": render_csv}
# MXNet reads its engine from the environment when it is imported.
ENGINES = {"threaded": "ThreadedEnginePerDevice", "naive": "NaiveEngine"}


def _on_off(text: str) -> bool:
    value = text.strip().lower()
    if value not in ("on", "off"):
        raise argparse.ArgumentTypeError(f"expected on or off, got {text!r}")
    return value == "on"


def _count(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="opperf",
        description="Benchmark every MXNet operator (forward, backward, peak memory) and write a report.",
        epilog="Categories: " + ", ".join(c.name for c in CATEGORIES),
    )
    parser.add_argument(
        "--ctx", default=None, help="device: cpu or gpu(N) (default: gpu(0) where MXNet sees a GPU, else cpu)"
    )
    parser.add_argument("--dtype", default="float32", choices=DTYPES, help="tensor dtype (default: float32)")
    parser.add_argument(
        "--output-format", default="json", choices=sorted(RENDERERS), help="report format (default: json)"
    )
    parser.add_argument(
        "--output-file",
        default=None,
        help="report path (default: mxnet_operator_benchmarks.<format>)",
    )
    parser.add_argument("--json-file", default=None, help="also write the JSON results document here")
    parser.add_argument(
        "--profiler",
        default="native",
        choices=PROFILERS,
        help="native: MXNet's profiler (operator time); python: perf_counter around each synchronised call",
    )
    parser.add_argument(
        "--int64-tensor",
        default=False,
        type=_on_off,
        metavar="{on,off}",
        help="on: large-tensor profile, tensors of more than 2**32 elements "
        "(needs an MXNet built with INT64_TENSOR_SIZE)",
    )
    parser.add_argument(
        "--warmup",
        default=SWEEP_WARMUP,
        type=_count(0),
        help=f"unmeasured runs first (default: {SWEEP_WARMUP})",
    )
    parser.add_argument(
        "--runs", default=SWEEP_RUNS, type=_count(1), help=f"measured runs per input (default: {SWEEP_RUNS})"
    )
    parser.add_argument(
        "--ops", default=(), type=_names, help="comma-separated operators, e.g. add,Convolution"
    )
    parser.add_argument(
        "--categories", default=(), type=_names, help="comma-separated categories, e.g. unary,pooling"
    )
    parser.add_argument(
        "--engine",
        default=None,
        choices=sorted(ENGINES),
        help="MXNet's execution engine (default: MXNET_ENGINE_TYPE, else threaded); naive runs each "
        "operator synchronously in the calling thread, without the engine's cross-thread hand-off",
    )
    parser.add_argument("--no-backward", action="store_true", help="measure the forward pass only")
    parser.add_argument("--seed", default=0, type=int, help="seed of the generated inputs (default: 0)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return parser


def _check_writable(path: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise OpperfError(
            f"output folder {folder!r} does not exist; create it or choose another --output-file"
        )


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader never sees a half-written file."""
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".opperf-", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as output:
            output.write(text)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes files private; reports are not
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


class _Progress:
    """One line per operator on stderr: count, elapsed time, category, name, outcome."""

    def __init__(self) -> None:
        self._start = time.monotonic()

    def __call__(self, index: int, total: int, op, results) -> None:
        elapsed = int(time.monotonic() - self._start)
        statuses = ", ".join(sorted({m.status.value for m in results}))
        print(
            f"[{index:>4}/{total} {elapsed // 60:>3}:{elapsed % 60:02}] {op.category:<22} {op.name:<40} "
            f"{len(results)} config(s): {statuses}",
            file=sys.stderr,
            flush=True,
        )


def _select_engine(engine: str) -> None:
    if "mxnet" in sys.modules and os.environ.get("MXNET_ENGINE_TYPE", ENGINES["threaded"]) != engine:
        raise OpperfError(
            f"--engine: MXNet is already imported with another engine; set MXNET_ENGINE_TYPE={engine}"
        )
    os.environ["MXNET_ENGINE_TYPE"] = engine


def run(arguments: argparse.Namespace) -> int:
    if arguments.engine is not None:
        _select_engine(ENGINES[arguments.engine])
    output_file = arguments.output_file or f"mxnet_operator_benchmarks.{arguments.output_format}"
    for path in filter(None, (output_file, arguments.json_file)):
        _check_writable(path)
    profile = INT64 if arguments.int64_tensor else STANDARD
    config = SweepConfig(
        options=RunOptions(
            run_backward=not arguments.no_backward,
            dtype=arguments.dtype,
            device=arguments.ctx or get_backend("mxnet").default_device(),
            warmup=arguments.warmup,
            runs=arguments.runs,
            profiler=arguments.profiler,
            seed=arguments.seed,
        ),
        profile=profile,
        ops=arguments.ops,
        categories=arguments.categories,
    )
    result = run_sweep(config, progress=None if arguments.quiet else _Progress())
    document = build_document(result.measurements, result.environment, result.registered)
    write_atomically(output_file, RENDERERS[arguments.output_format](document))
    if arguments.json_file:
        write_atomically(arguments.json_file, render_json(document))
    coverage = document["coverage"]
    print(
        f"{coverage['operators']} operators: {coverage['ok']} ok, {coverage['skipped']} skipped, "
        f"{coverage['failed']} failed in {result.environment['wall_seconds']:.0f} s; report: {output_file}",
        file=sys.stderr,
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    try:
        return run(arguments)
    except OpperfError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
