"""The work an operator does: the bytes it must move and the floating-point operations it must do.

Counted from a ``BenchmarkSpec`` alone (input shapes, dtypes and attributes), so a measured time
becomes an achieved rate (GB/s, GFLOP/s) that can be set against the machine's roofs
(``opperf.measure.roofline.peaks``). The model is the roofline's:

- **bytes**: each input read once and each output written once. This is the compulsory traffic; a
  kernel that reads its input twice (a normalisation's statistics pass) or writes through a cache
  line it must first read moves more, so achieved GB/s is an effective bandwidth, a lower bound on
  what the memory system served.
- **FLOPs**: operations on elements. An elementary function (``exp``, ``log``, ``sin``, ``sqrt``,
  ``erf``) or a comparison counts as one, however many instructions it takes; a multiply-add counts
  two. Operators built from several such operations count each (``SIGMOID_FLOPS`` and friends).

The counts are the forward pass's; a backward pass's work is not counted.

Operators are looked up by name in their framework's table (``opperf.frameworks.<name>.work.COUNTERS``,
built from the counters here); a counter reads the tensors
and attributes it needs and declines, making ``count_work`` return None, wherever the spec does not
determine the work: an operator not in the table, sparse storage, arrays the caller passed in, a
layout or convention the counter does not model. It never guesses.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from opperf.measure.memory import ITEMSIZE
from opperf.results.measurement import (
    Alias,
    BenchmarkSpec,
    TensorSpec,
    Work,
    is_given_array,
    is_tensor_list,
)
from opperf.utils.stats import ratio

if TYPE_CHECKING:
    from opperf.measure.roofline.peaks import MachinePeaks

Shape = tuple[int, ...]

GIGA = 10**9

"""Rates are in decimal units: 1 GB/s is 10**9 bytes per second."""

BOOL_ITEMSIZE = ITEMSIZE["bool"]

SIGMOID_FLOPS = 4

"""1 / (1 + exp(-x)): negate, exponentiate, add, divide."""

SOFTSIGN_FLOPS = 3

"""x / (1 + |x|): absolute value, add, divide."""

SOFTRELU_FLOPS = 3

"""log(1 + exp(x)): exponentiate, add, logarithm."""

HARD_SIGMOID_FLOPS = 4

"""clip(alpha * x + beta, 0, 1): multiply, add, two comparisons."""

HYPOT_FLOPS = 4

"""sqrt(a * a + b * b): two multiplies, add, square root."""

RECIPROCAL_ROOT_FLOPS = 2

"""1 / sqrt(x) and 1 / cbrt(x): root, divide."""

NAN_SKIPPING_FLOPS = 2

"""nansum and nanprod, per element: a NaN test, then the add or multiply."""

SQUARE_SUM_FLOPS = 2

"""Sum of squares and norms, per element: square (or absolute value), add. A norm's final square root,
one per output, is not counted."""

SOFTMAX_FLOPS = 5

"""Softmax along an axis, per element: running maximum, subtract it, exponentiate, sum, divide
(log-softmax: logarithm and subtract in place of the divide). An approximation: a temperature's
divide and softmin's negation are not counted."""

NORMALIZE_FLOPS = 4

"""(x - mean) * inverse_std * gamma + beta, per element, with the per-channel inverse standard
deviation computed once (not counted)."""

STATISTICS_FLOPS = 4

"""Batch statistics, per element: the mean's add; the variance's subtract, square and add."""


@dataclass(frozen=True)
class Rates:
    """Achieved throughput in decimal units: gigabytes and gigaFLOPs per second."""

    gb_per_s: float
    gflop_per_s: float

    @property
    def intensity(self) -> float:
        """FLOPs per byte, the same as the counted work's."""
        return ratio(self.gflop_per_s, self.gb_per_s)


class Bound(str, Enum):
    """Which roof limits an operator: memory bandwidth, or the arithmetic rate (measured as GEMM's)."""

    MEMORY = "memory"
    COMPUTE = "compute"


@dataclass(frozen=True)
class PeakFractions:
    """Achieved rates as fractions of the machine's peaks, and which of the two bounds the operator.

    ``bound`` is the roofline's verdict: an operator whose intensity is at least the machine's ridge
    point (peak FLOP/s over peak bytes/s) is compute-bound, any other memory-bound. ``of_roof`` is the
    fraction of the bounding roof, the one figure to compare across operators; it equals the larger of
    the two fractions, so a memory-bound copy at 80% of bandwidth reads 0.8, not its 0% of the FLOPs.
    """

    bandwidth: float
    compute: float
    bound: Bound

    @property
    def of_roof(self) -> float:
        return self.compute if self.bound is Bound.COMPUTE else self.bandwidth

    def describe(self) -> dict[str, object]:
        return {
            "bandwidth": self.bandwidth,
            "compute": self.compute,
            "bound": self.bound.value,
            "of_roof": self.of_roof,
        }


def achieved(work: Work, seconds: float) -> Rates:
    """The rates ``work`` done in ``seconds`` (a median forward time, say) achieves.

    >>> achieved(Work(bytes_moved=3 * 2**22, flops=2**20), 0.001)
    Rates(gb_per_s=12.582912, gflop_per_s=1.048576)
    """
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"seconds must be positive and finite, got {seconds!r}")
    return Rates(gb_per_s=work.bytes_moved / seconds / GIGA, gflop_per_s=work.flops / seconds / GIGA)


def fraction_of_peak(rates: Rates, peaks: MachinePeaks) -> PeakFractions:
    """Both fractions of the machine's peaks, and the roof that bounds an operator of this intensity.

    The peaks are host (CPU) figures, and the GEMM peak a float32 one: fractions mean something for
    CPU measurements only, and are relative to the float32 rate whatever the operator's dtype. The
    bandwidth peak is main memory's: an operator whose tensors fit in cache can exceed it (a
    fraction above 1), which says the operator ran from cache, not that the peak is wrong.
    """
    ridge = peaks.gemm_flops_per_s / peaks.bandwidth_bytes_per_s
    return PeakFractions(
        bandwidth=rates.gb_per_s * GIGA / peaks.bandwidth_bytes_per_s,
        compute=rates.gflop_per_s * GIGA / peaks.gemm_flops_per_s,
        bound=Bound.COMPUTE if rates.intensity >= ridge else Bound.MEMORY,
    )


class UncountableError(Exception):
    """The spec does not determine the work; ``count_work`` turns this into None."""


@dataclass(frozen=True)
class Operand:
    """A tensor input as the counters see it: its shape and element size."""

    shape: Shape
    itemsize: int

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize


@dataclass(frozen=True)
class Operands:
    """What a counter reads: a spec's tensors and other arguments, the measured output shapes, and
    whether the forward pass runs in training mode (normalisation layers then compute statistics)."""

    tensors: tuple[tuple[str, Operand], ...]
    attributes: tuple[tuple[str, object], ...]
    measured_outputs: tuple[Shape, ...] | None = None
    training: bool = True

    @classmethod
    def of(cls, spec: BenchmarkSpec, output_shapes: tuple[Shape, ...] | None = None) -> Operands:
        """The spec's dense generated tensors and its other arguments; raises ``UncountableError`` for
        inputs whose bytes the spec does not give (sparse storage, tensor lists, the caller's arrays)."""
        tensors, attributes = [], []
        for name, value in spec.inputs:
            if isinstance(value, TensorSpec):
                itemsize = ITEMSIZE.get(value.dtype or spec.options.dtype)
                if value.storage != "default" or itemsize is None:
                    raise UncountableError
                tensors.append((name, Operand(value.shape, itemsize)))
            elif is_tensor_list(value) or is_given_array(value) or isinstance(value, Alias):
                raise UncountableError
            else:
                attributes.append((name, value))
        return cls(tuple(tensors), tuple(attributes), output_shapes, spec.options.mode != "inference")

    def get(self, *names: str) -> Operand | None:
        """The tensor under the first of ``names`` given, or None."""
        given = dict(self.tensors)
        return next((given[name] for name in names if name in given), None)

    def require(self, *names: str) -> Operand:
        tensor = self.get(*names)
        if tensor is None:
            raise UncountableError
        return tensor

    def only(self) -> Operand:
        """The one tensor input of a single-input operator."""
        if len(self.tensors) != 1:
            raise UncountableError
        return self.tensors[0][1]

    def attribute(self, name: str, default: object = None) -> object:
        """A non-tensor argument; an explicit None is the operator's default, as the frameworks read it."""
        value = dict(self.attributes).get(name)
        return default if value is None else value

    def flag(self, name: str, default: bool | None = None) -> bool:
        """A boolean attribute (``True``, ``1``, ``"true"``); absent, ``default``, or uncountable if None."""
        value = self.attribute(name, default)
        if isinstance(value, str) and value.lower() in _FLAG_TEXT:
            return _FLAG_TEXT[value.lower()]
        if isinstance(value, (bool, int)) and value in (0, 1):
            return bool(value)
        raise UncountableError

    def outputs(self, computed: Callable[[], tuple[Shape, ...]]) -> tuple[Shape, ...]:
        """The measured output shapes where given, else the ``computed`` ones."""
        return self.measured_outputs if self.measured_outputs is not None else computed()

    def work(
        self,
        flops: int,
        outputs: tuple[Shape, ...],
        reads: tuple[Operand, ...] | None = None,
        output_itemsize: int | None = None,
    ) -> Work:
        """``reads`` (every tensor input unless given) read once, ``outputs`` written once.

        Outputs take the first input's element size unless ``output_itemsize`` says otherwise.
        """
        reads = tuple(tensor for _, tensor in self.tensors) if reads is None else reads
        itemsize = output_itemsize or reads[0].itemsize
        written = sum(math.prod(shape) for shape in outputs) * itemsize
        return Work(bytes_moved=sum(t.nbytes for t in reads) + written, flops=flops)


_FLAG_TEXT = {"true": True, "1": True, "false": False, "0": False}

Counter = Callable[[Operands], Work]

"""Counts one operator's work from its operands, or raises ``UncountableError``."""


def integer(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise UncountableError


def integers(value: object) -> Shape:
    """A tuple of ints; a bare int is a 1-tuple."""
    if isinstance(value, tuple):
        return tuple(integer(v) for v in value)
    return (integer(value),)


def per_dimension(value: object, dims: int, default: int) -> Shape:
    """A stride, padding or dilation for ``dims`` spatial dimensions: absent or empty means ``default``
    in each, an int or a 1-tuple applies to all of them."""
    if value is None or value == ():
        return (default,) * dims
    values = integers(value)
    if len(values) == 1:
        return values * dims
    if len(values) != dims:
        raise UncountableError
    return values


def broadcast_shapes(*shapes: Shape) -> Shape:
    """The broadcast of ``shapes`` by NumPy's rules; raises ``UncountableError`` where they do not."""
    ndim = max(len(shape) for shape in shapes)
    result = []
    for axis in range(ndim):
        sizes = {shape[axis - ndim + len(shape)] for shape in shapes if axis - ndim + len(shape) >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            raise UncountableError
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def reduced_shape(shape: Shape, axis: object, keepdims: bool, exclude: bool = False) -> Shape:
    """The output shape of a reduction over ``axis`` (None: every axis), or over every other axis
    with ``exclude``. An empty axis tuple is uncountable: MXNet's legacy operators reduce every axis
    for it, NumPy's none."""
    ndim = len(shape)
    if axis is None:
        axes = set(range(ndim))
    else:
        given = integers(axis)
        if not given or any(not -ndim <= a < ndim for a in given):
            raise UncountableError
        axes = {a % ndim for a in given}
    if exclude:
        axes = set(range(ndim)) - axes
    if keepdims:
        return tuple(1 if i in axes else size for i, size in enumerate(shape))
    return tuple(size for i, size in enumerate(shape) if i not in axes)


def _same_output_type(operands: Operands) -> None:
    """Operators with a ``dtype`` argument write their output in another type than their input's."""
    if operands.attribute("dtype") is not None:
        raise UncountableError


@dataclass(frozen=True)
class Elementwise:
    """Element-wise over broadcast inputs: each read once, one output of the broadcast shape, ``flops``
    per output element. ``output_itemsize`` is for outputs of another type (comparisons to booleans)."""

    flops: int = 1
    output_itemsize: int | None = None

    def __call__(self, operands: Operands) -> Work:
        if not operands.tensors:
            raise UncountableError
        shape = broadcast_shapes(*(tensor.shape for _, tensor in operands.tensors))
        outputs = operands.outputs(lambda: (shape,))
        return operands.work(self.flops * math.prod(shape), outputs, output_itemsize=self.output_itemsize)


@dataclass(frozen=True)
class Reduction:
    """A reduction of one tensor: ``flops`` per input element, output shape from the axis arguments."""

    flops: int = 1
    axis: str = "axis"
    keepdims: str = "keepdims"

    def __call__(self, operands: Operands) -> Work:
        data = operands.only()
        _same_output_type(operands)
        outputs = operands.outputs(
            lambda: (
                reduced_shape(
                    data.shape,
                    operands.attribute(self.axis),
                    operands.flag(self.keepdims, default=False),
                    operands.flag("exclude", default=False),
                ),
            )
        )
        return operands.work(self.flops * data.size, outputs)


DATA = ("data", "input")

"""The main tensor's argument name: MXNet's, PyTorch's."""


@dataclass(frozen=True)
class Softmax:
    """Softmax-like operators along one axis: ``SOFTMAX_FLOPS`` per element, output shaped like the input.
    Masking by a length tensor (``use_length``) is not modelled."""

    data: tuple[str, ...] = DATA

    def __call__(self, operands: Operands) -> Work:
        if operands.flag("use_length", default=False):
            raise UncountableError
        _same_output_type(operands)
        data = operands.require(*self.data)
        return operands.work(
            SOFTMAX_FLOPS * data.size, operands.outputs(lambda: (data.shape,)), reads=(data,)
        )


def _always(operands: Operands) -> bool:
    return True


@dataclass(frozen=True)
class Normalization:
    """Batch, layer, group and instance normalisation: ``NORMALIZE_FLOPS`` per element, and
    ``STATISTICS_FLOPS`` more where ``computes_statistics`` says the operator computes the mean and
    variance of its input (training mode) rather than reading running ones. Every tensor input (scale,
    shift, running statistics) is read once; the output is shaped like the data."""

    computes_statistics: Callable[[Operands], bool] = _always
    data: tuple[str, ...] = DATA

    def __call__(self, operands: Operands) -> Work:
        data = operands.require(*self.data)
        per_element = NORMALIZE_FLOPS + (STATISTICS_FLOPS if self.computes_statistics(operands) else 0)
        return operands.work(per_element * data.size, operands.outputs(lambda: (data.shape,)))


def matrix_dims(shape: Shape, transposed: bool) -> tuple[int, int]:
    rows, columns = shape[-2:]
    return (columns, rows) if transposed else (rows, columns)


def matrix_product(
    operands: Operands, batch: int, m: int, k: int, n: int, out: Shape, reads: tuple[Operand, ...]
) -> Work:
    """``batch`` products of an (m, k) and a (k, n) matrix: 2 * batch * m * n * k FLOPs."""
    return operands.work(2 * batch * m * n * k, operands.outputs(lambda: (out,)), reads=reads)


@dataclass(frozen=True)
class Matmul:
    """NumPy's and PyTorch's ``matmul``: matrices in the last two axes, leading axes broadcast, a 1-D
    operand promoted to a matrix. ``batched=False`` counts only 1-D and 2-D operands (``numpy.dot``
    and ``mm``, which do not broadcast a batch)."""

    a: tuple[str, ...]
    b: tuple[str, ...]
    batched: bool = True

    def __call__(self, operands: Operands) -> Work:
        a, b = operands.require(*self.a), operands.require(*self.b)
        if 0 in (a.ndim, b.ndim) or (not self.batched and max(a.ndim, b.ndim) > 2):
            raise UncountableError
        a_shape = a.shape if a.ndim > 1 else (1, *a.shape)
        b_shape = b.shape if b.ndim > 1 else (*b.shape, 1)
        (m, k), (k_b, n) = a_shape[-2:], b_shape[-2:]
        if k != k_b:
            raise UncountableError
        batch = broadcast_shapes(a_shape[:-2], b_shape[:-2])
        out = batch + ((m,) if a.ndim > 1 else ()) + ((n,) if b.ndim > 1 else ())
        return matrix_product(operands, math.prod(batch), m, k, n, out, (a, b))


def dense_work(
    operands: Operands, data: Operand, weight: Operand, bias: Operand | None, leading: Shape, inner: int
) -> Work:
    """``data`` as rows of ``inner`` features times a (hidden, inner) ``weight``, plus a bias per output."""
    hidden = weight.shape[0]
    if weight.shape != (hidden, inner) or (bias is not None and bias.shape != (hidden,)):
        raise UncountableError
    rows = math.prod(leading)
    flops = 2 * rows * inner * hidden + (rows * hidden if bias is not None else 0)
    reads = (data, weight) if bias is None else (data, weight, bias)
    return operands.work(flops, operands.outputs(lambda: ((*leading, hidden),)), reads=reads)


@dataclass(frozen=True)
class Window:
    """A sliding window over the trailing spatial axes: its extent, step, padding (each side), dilation."""

    kernel: Shape
    stride: Shape
    padding: Shape
    dilation: Shape

    def _each(self, spatial: Shape) -> zip[tuple[int, int, int, int, int]]:
        if len(spatial) != len(self.kernel):
            raise UncountableError
        return zip(spatial, self.kernel, self.stride, self.padding, self.dilation, strict=True)

    def convolved(self, spatial: Shape) -> Shape:
        """Output lengths of a convolution (or pooling, rounding down)."""
        return self.pooled(spatial, ceil=False, clamp=False)

    def deconvolved(self, spatial: Shape, extra: Shape) -> Shape:
        """Output lengths of a transposed convolution, ``extra`` added on one side (``adj``,
        ``output_padding``)."""
        lengths = tuple(
            stride * (size - 1) + dilation * (kernel - 1) + 1 - 2 * padding + added
            for (size, kernel, stride, padding, dilation), added in zip(
                self._each(spatial), extra, strict=True
            )
        )
        return _positive(lengths)

    def pooled(self, spatial: Shape, ceil: bool, clamp: bool) -> Shape:
        """Output lengths of a pooling, rounding up with ``ceil``; ``clamp`` drops a last window that
        would start in the right padding, as PyTorch does."""
        lengths = []
        for size, kernel, stride, padding, dilation in self._each(spatial):
            span = size + 2 * padding - dilation * (kernel - 1) - 1
            length = (-(-span // stride) if ceil else span // stride) + 1
            if ceil and clamp and (length - 1) * stride >= size + padding:
                length -= 1
            lengths.append(length)
        return _positive(tuple(lengths))


def _positive(lengths: Shape) -> Shape:
    if any(length < 1 for length in lengths) or not lengths:
        raise UncountableError
    return lengths


def sliding_window(
    operands: Operands, kernel: Shape, names: tuple[str, str, str], default_stride: Shape = ()
) -> Window:
    """The window of ``kernel`` from the (stride, padding, dilation) arguments ``names``; an absent
    stride is ``default_stride`` if given, else 1."""
    dims = len(kernel)
    stride = operands.attribute(names[0], ())
    return Window(
        kernel=kernel,
        stride=default_stride if default_stride and stride == () else per_dimension(stride, dims, 1),
        padding=per_dimension(operands.attribute(names[1]), dims, 0),
        dilation=per_dimension(operands.attribute(names[2]), dims, 1),
    )


def convolution_work(
    operands: Operands,
    data: Operand,
    weight: Operand,
    bias: Operand | None,
    groups: int,
    out_spatial: Shape,
    transposed: bool,
) -> Work:
    """2 * multiply-adds, plus one add per output element for a bias.

    A convolution's weight is (f, c / groups, *kernel) and it does n * f * (c / groups) * prod(kernel)
    multiply-adds per output position; a transposed convolution's weight is (c, f / groups, *kernel)
    and it scatters each input position instead: n * c * (f / groups) * prod(kernel) per input position.
    """
    if data.ndim != len(out_spatial) + 2 or weight.ndim != data.ndim or groups < 1:
        raise UncountableError
    batch, channels = data.shape[:2]
    per_window = weight.shape[1] * math.prod(weight.shape[2:])
    if transposed:
        filters, in_groups = weight.shape[1] * groups, weight.shape[0]
        multiply_adds = batch * channels * per_window * math.prod(data.shape[2:])
    else:
        filters, in_groups = weight.shape[0], weight.shape[1] * groups
        multiply_adds = batch * filters * per_window * math.prod(out_spatial)
    if in_groups != channels or filters % groups or (bias is not None and bias.shape != (filters,)):
        raise UncountableError
    output = (batch, filters, *out_spatial)
    flops = 2 * multiply_adds + (math.prod(output) if bias is not None else 0)
    reads = (data, weight) if bias is None else (data, weight, bias)
    return operands.work(flops, operands.outputs(lambda: (output,)), reads=reads)


def pooling_work(operands: Operands, data: Operand, kernel: Shape, out_spatial: Callable[[], Shape]) -> Work:
    """One operation (comparison or add) per window element per output element; the input read once."""
    leading = data.shape[: data.ndim - len(kernel)]
    outputs = operands.outputs(lambda: ((*leading, *out_spatial()),))
    return operands.work(math.prod(kernel) * math.prod(outputs[0]), outputs, reads=(data,))


ELEMENTWISE = Elementwise()

BOOLEAN_RESULT = Elementwise(output_itemsize=BOOL_ITEMSIZE)


def counters(framework: str) -> Mapping[str, Counter]:
    """A framework's counters by operator name (its package's ``work.COUNTERS``); none for a framework
    opperf does not know."""
    from opperf.frameworks import FRAMEWORKS, framework_module

    return framework_module(framework, "work").COUNTERS if framework in FRAMEWORKS else {}


def count_work(spec: BenchmarkSpec, output_shapes: tuple[Shape, ...] | None = None) -> Work | None:
    """The bytes ``spec``'s operator moves and the FLOPs it does, or None where they cannot be counted.

    ``output_shapes`` (the shapes of the outputs a run produced) replace the shapes the counter
    computes, and let it count operators whose output shape the arguments leave open.

    >>> from opperf.results.measurement import freeze_inputs
    >>> add = BenchmarkSpec("mx.nd", "broadcast_add",
    ...                     freeze_inputs({"lhs": TensorSpec((1024, 1024)), "rhs": TensorSpec((1024, 1024))}))
    >>> count_work(add)
    Work(bytes_moved=12582912, flops=1048576)
    """
    counter = counters(spec.framework).get(spec.op)
    if counter is None:
        return None
    try:
        return counter(Operands.of(spec, output_shapes))
    except UncountableError:
        return None
