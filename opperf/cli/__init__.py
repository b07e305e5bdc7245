"""``opperf``: sweep a framework's operator registry and write a report."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from opperf.benchmark import PROFILERS, RunOptions
from opperf.comparison import DEFAULT_OPERATORS, compare, configurations
from opperf.comparison import render_markdown as render_comparison
from opperf.errors import OpperfError
from opperf.frameworks import FRAMEWORKS, get_backend
from opperf.frameworks.mxnet.categories import CATEGORIES
from opperf.report.coverage import render_coverage
from opperf.report.csv_report import render_csv
from opperf.report.document import build_document
from opperf.report.json_report import render_json
from opperf.report.markdown import render_markdown
from opperf.rules.profiles import INT64, STANDARD
from opperf.sampling import DEFAULT_BUDGET_S, DEFAULT_TARGET
from opperf.sweep import DEFAULT_TIMEOUT_S, SweepConfig, run_sweep
from opperf.utils.affinity import AUTO, check_setting
from opperf.utils.cache import CACHE_MODES
from opperf.utils.files import write_atomically
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


def _positive(what: str, below_one: bool = False):
    """A parser of positive numbers (and less than 1 with ``below_one``); ``what`` names the expected."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value <= 0 or (below_one and value >= 1):
            bound = "strictly between 0 and 1" if below_one else "positive"
            raise argparse.ArgumentTypeError(f"must be {bound}, got {value:g}")
        return value

    return parse


_seconds = _positive("a number of seconds")
_fraction = _positive("a fraction such as 0.02", below_one=True)


def _affinity(text: str) -> str:
    try:
        return check_setting(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="opperf",
        description="Benchmark every operator of MXNet or PyTorch (forward, backward, peak memory) and "
        "write a report.",
        epilog="Categories: " + ", ".join(c.name for c in CATEGORIES),
    )
    parser.add_argument(
        "--framework",
        default="mxnet",
        choices=sorted(FRAMEWORKS),
        help="whose operator registry to sweep (default: mxnet)",
    )
    parser.add_argument(
        "--compare",
        default=(),
        type=_names,
        metavar="NAMESPACES",
        help="compare namespaces instead of sweeping, e.g. mx.nd,mx.np,torch: one table of each --ops "
        "operator (mx.nd names; default: add, multiply, exp, sum, dot, softmax, Convolution, Pooling, "
        "FullyConnected, BatchNorm) per input configuration, with forward ratios against the first",
    )
    parser.add_argument(
        "--ctx",
        default=None,
        help="device: cpu or gpu(N), which is cuda:N for PyTorch (default: gpu(0) where the framework "
        "sees a GPU, else cpu)",
    )
    parser.add_argument(
        "--threads",
        default=None,
        type=_count(1),
        help="intra-op threads of the framework (OpenMP for MXNet, torch.set_num_threads for PyTorch), "
        "recorded in the results; compare frameworks on the same count (default: the framework's own)",
    )
    parser.add_argument(
        "--affinity",
        default=AUTO,
        type=_affinity,
        metavar="{auto,none,CPUS}",
        help="CPUs each worker runs on: auto pins it to one CPU per intra-op thread (the last ones), "
        "which makes medians repeatable across processes; none leaves it to the scheduler; or a list "
        "such as 1 or 0,2-3 (default: auto)",
    )
    parser.add_argument("--dtype", default="float32", choices=DTYPES, help="tensor dtype (default: float32)")
    parser.add_argument(
        "--output-format", default="json", choices=sorted(RENDERERS), help="report format (default: json)"
    )
    parser.add_argument(
        "--output-file",
        default=None,
        help="report path (default: <framework>_operator_benchmarks.<format>)",
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
        default=None,
        type=_count(0),
        help="exactly this many unmeasured passes first (default: adaptive, until pass times settle)",
    )
    parser.add_argument(
        "--runs",
        default=None,
        type=_count(1),
        help="exactly this many measured passes per input (default: adaptive, until the median is "
        "within --target-precision or --budget is spent)",
    )
    parser.add_argument(
        "--target-precision",
        default=DEFAULT_TARGET,
        type=_fraction,
        help="adaptive sampling stops once the median's 95%% confidence interval is within this fraction "
        f"of it (default: {DEFAULT_TARGET:g})",
    )
    parser.add_argument(
        "--budget",
        default=DEFAULT_BUDGET_S,
        type=_seconds,
        help="seconds of warm-up and measurement per input configuration in adaptive sampling "
        f"(default: {DEFAULT_BUDGET_S:g})",
    )
    parser.add_argument(
        "--cache",
        default="hot",
        choices=CACHE_MODES,
        help="hot: passes reuse one input set, cached as in a training loop; cold: passes rotate "
        "through input sets together twice the last-level cache, so memory-bound operators are timed "
        "at memory bandwidth (default: hot)",
    )
    parser.add_argument(
        "--recalibrate-peaks",
        action="store_true",
        help="measure this machine's peak memory bandwidth and GEMM rate again instead of using the "
        "cached figures (~/.cache/opperf/peaks.json) that roofline fractions are relative to",
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
    parser.add_argument(
        "--timeout",
        default=DEFAULT_TIMEOUT_S,
        type=_seconds,
        help=f"seconds an operator may take, all its input configurations together, before its worker is "
        f"killed and it is recorded as a timeout (default: {DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--no-isolation",
        action="store_true",
        help="run operators in this process: faster to start, but a crash ends the sweep "
        "and a hang blocks it",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted sweep from its journal (OUTPUT_FILE.journal.jsonl), "
        "without re-running finished operators",
    )
    parser.add_argument(
        "--coverage",
        action="store_true",
        help="print, per category, how many operators were benchmarked, skipped (why) and failed (why); "
        "exit 1 if any selected operator is unaccounted for",
    )
    parser.add_argument("--no-backward", action="store_true", help="measure the forward pass only")
    parser.add_argument("--seed", default=0, type=int, help="seed of the generated inputs (default: 0)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar (there is none off a terminal)")
    return parser


def _check_writable(path: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise OpperfError(
            f"output folder {folder!r} does not exist; create it or choose another --output-file"
        )


class _ProgressBar:
    """A progress bar on stderr: operators done, the current one, and the time left."""

    def __init__(self) -> None:
        from tqdm import tqdm

        self._bar = tqdm(unit="op", dynamic_ncols=True, file=sys.stderr)

    def __call__(self, index: int, total: int, op, results) -> None:
        self._bar.total = total
        self._bar.set_postfix_str(f"{op.name} ({', '.join(sorted({m.status.value for m in results}))})")
        self._bar.update(index - self._bar.n)

    def close(self) -> None:
        self._bar.close()


def _select_engine(engine: str) -> None:
    if "mxnet" in sys.modules and os.environ.get("MXNET_ENGINE_TYPE", ENGINES["threaded"]) != engine:
        raise OpperfError(
            f"--engine: MXNet is already imported with another engine; set MXNET_ENGINE_TYPE={engine}"
        )
    os.environ["MXNET_ENGINE_TYPE"] = engine


def _run_options(arguments: argparse.Namespace, device: str) -> RunOptions:
    """How each benchmark runs, as the flags say."""
    return RunOptions(
        run_backward=not arguments.no_backward,
        dtype=arguments.dtype,
        device=device,
        framework=arguments.framework,
        threads=arguments.threads,
        warmup=arguments.warmup,
        runs=arguments.runs,
        target=arguments.target_precision,
        budget_s=arguments.budget,
        cache=arguments.cache,
        profiler=arguments.profiler,
        seed=arguments.seed,
    )


def run(arguments: argparse.Namespace) -> int:
    if arguments.engine is not None:
        _select_engine(ENGINES[arguments.engine])
    if arguments.compare:
        return run_comparison(arguments)
    output_file = (
        arguments.output_file or f"{arguments.framework}_operator_benchmarks.{arguments.output_format}"
    )
    for path in filter(None, (output_file, arguments.json_file)):
        _check_writable(path)
    journal = f"{output_file}.journal.jsonl"
    config = SweepConfig(
        options=_run_options(arguments, arguments.ctx or get_backend(arguments.framework).default_device()),
        profile=INT64 if arguments.int64_tensor else STANDARD,
        ops=arguments.ops,
        categories=arguments.categories,
        isolate=not arguments.no_isolation,
        timeout_s=arguments.timeout,
        journal=journal,
        resume=arguments.resume,
        recalibrate_peaks=arguments.recalibrate_peaks,
        affinity=arguments.affinity,
    )
    progress = _ProgressBar() if sys.stderr.isatty() and not arguments.quiet else None
    try:
        result = run_sweep(config, progress=progress)
    finally:
        if progress is not None:
            progress.close()
    document = build_document(result.measurements, result.environment, result.registered, result.aliases)
    write_atomically(output_file, RENDERERS[arguments.output_format](document))
    if arguments.json_file:
        write_atomically(arguments.json_file, render_json(document))
    if arguments.coverage:
        print(render_coverage(document["coverage"]))
    coverage = document["coverage"]
    summary = (
        f"{coverage['operators']} operators: {coverage['ok']} ok, {coverage['skipped']} skipped, "
        f"{coverage['failed']} failed, {coverage['crashed']} crashed, {coverage['timeout']} timed out "
        f"in {result.environment['wall_seconds']:.0f} s"
        + (f" ({result.resumed} from the journal)" if result.resumed else "")
        + f"; report: {output_file}"
    )
    if result.interrupted:
        print(
            f"interrupted after {result.measured} of {result.selected} operators; {summary}; "
            "continue with the same command and --resume",
            file=sys.stderr,
        )
        return 130
    os.unlink(journal)
    print(summary, file=sys.stderr)
    if arguments.coverage and coverage["operators"] != result.selected:
        print(
            f"error: {result.selected - coverage['operators']} selected operators have no record",
            file=sys.stderr,
        )
        return 1
    return 0


def run_comparison(arguments: argparse.Namespace) -> int:
    """``--compare``: each operator in each namespace on the same configurations, as one Markdown table."""
    namespaces = arguments.compare
    options = _run_options(arguments, arguments.ctx or "cpu")
    if arguments.output_file:
        _check_writable(arguments.output_file)
    rows = [
        row
        for name in arguments.ops or DEFAULT_OPERATORS
        for row in compare(name, configurations(name, namespaces[0]), namespaces, options)
    ]
    text = render_comparison(rows, namespaces)
    if arguments.output_file:
        write_atomically(arguments.output_file, text)
    else:
        print(text, end="")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    try:
        return run(arguments)
    except OpperfError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted before any operator finished", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
