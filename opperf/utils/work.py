"""The work an operator does: the bytes it must move and the floating-point operations it must do.

Counted from a ``BenchmarkSpec`` alone (input shapes, dtypes and attributes), so a measured time
becomes an achieved rate (GB/s, GFLOP/s) that can be set against the machine's roofs
(``opperf.utils.peaks``). The model is the roofline's:

- **bytes**: each input read once and each output written once. This is the compulsory traffic; a
  kernel that reads its input twice (a normalisation's statistics pass) or writes through a cache
  line it must first read moves more, so achieved GB/s is an effective bandwidth, a lower bound on
  what the memory system served.
- **FLOPs**: operations on elements. An elementary function (``exp``, ``log``, ``sin``, ``sqrt``,
  ``erf``) or a comparison counts as one, however many instructions it takes; a multiply-add counts
  two. Operators built from several such operations count each (``SIGMOID_FLOPS`` and friends).

The counts are the forward pass's; a backward pass's work is not counted.

Operators are looked up by name in a per-framework table (``COUNTERS``); a counter reads the tensors
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

from opperf.results import Alias, BenchmarkSpec, TensorSpec, is_given_array, is_tensor_list
from opperf.utils.memory import ITEMSIZE

if TYPE_CHECKING:
    from opperf.utils.peaks import MachinePeaks

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
class Work:
    """Compulsory bytes moved (inputs read once, outputs written once) and floating-point operations."""

    bytes_moved: int
    flops: int

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, FLOPs per byte: which roof bounds the operator."""
        return _ratio(self.flops, self.bytes_moved)


@dataclass(frozen=True)
class Rates:
    """Achieved throughput in decimal units: gigabytes and gigaFLOPs per second."""

    gb_per_s: float
    gflop_per_s: float

    @property
    def intensity(self) -> float:
        """FLOPs per byte, the same as the counted work's."""
        return _ratio(self.gflop_per_s, self.gb_per_s)


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


def _ratio(numerator: float, denominator: float) -> float:
    if denominator:
        return numerator / denominator
    return math.inf if numerator else 0.0


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
    """What a counter reads: a spec's tensors and other arguments, and the measured output shapes."""

    tensors: tuple[tuple[str, Operand], ...]
    attributes: tuple[tuple[str, object], ...]
    measured_outputs: tuple[Shape, ...] | None = None

    @classmethod
    def of(cls, spec: BenchmarkSpec, output_shapes: tuple[Shape, ...] | None = None) -> Operands:
        """The spec's dense generated tensors and its other arguments; raises ``UncountableError`` for
        inputs whose bytes the spec does not give (sparse storage, tensor lists, the caller's arrays)."""
        tensors, attributes = [], []
        for name, value in spec.inputs:
            if isinstance(value, TensorSpec):
                itemsize = ITEMSIZE.get(value.dtype or spec.dtype)
                if value.storage != "default" or itemsize is None:
                    raise UncountableError
                tensors.append((name, Operand(value.shape, itemsize)))
            elif is_tensor_list(value) or is_given_array(value) or isinstance(value, Alias):
                raise UncountableError
            else:
                attributes.append((name, value))
        return cls(tuple(tensors), tuple(attributes), output_shapes)

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


def _integer(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise UncountableError


def _integers(value: object) -> Shape:
    """A tuple of ints; a bare int is a 1-tuple."""
    if isinstance(value, tuple):
        return tuple(_integer(v) for v in value)
    return (_integer(value),)


def _per_dimension(value: object, dims: int, default: int) -> Shape:
    """A stride, padding or dilation for ``dims`` spatial dimensions: absent or empty means ``default``
    in each, an int or a 1-tuple applies to all of them."""
    if value is None or value == ():
        return (default,) * dims
    values = _integers(value)
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
        given = _integers(axis)
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


ACTIVATION_FLOPS: Mapping[str, int] = {
    "relu": 1,
    "tanh": 1,
    "sigmoid": SIGMOID_FLOPS,
    "softrelu": SOFTRELU_FLOPS,
    "softsign": SOFTSIGN_FLOPS,
}
"""MXNet ``Activation`` types by cost; the others (``log_sigmoid``, ``mish``) are not counted."""


def _activation(operands: Operands) -> Work:
    flops = ACTIVATION_FLOPS.get(str(operands.attribute("act_type", "")))
    if flops is None:
        raise UncountableError
    return Elementwise(flops)(operands)


def _matrix(shape: Shape, transposed: bool) -> tuple[int, int]:
    rows, columns = shape[-2:]
    return (columns, rows) if transposed else (rows, columns)


def _matrix_product(
    operands: Operands, batch: int, m: int, k: int, n: int, out: Shape, reads: tuple[Operand, ...]
) -> Work:
    """``batch`` products of an (m, k) and a (k, n) matrix: 2 * batch * m * n * k FLOPs."""
    return operands.work(2 * batch * m * n * k, operands.outputs(lambda: (out,)), reads=reads)


def _dot(operands: Operands) -> Work:
    """MXNet's ``dot``: the last axis of ``lhs`` against the first of ``rhs`` (transposes: 1-D and 2-D)."""
    lhs, rhs = operands.require("lhs"), operands.require("rhs")
    transpose_a = operands.flag("transpose_a", default=False)
    transpose_b = operands.flag("transpose_b", default=False)
    if (transpose_a and lhs.ndim > 2) or (transpose_b and rhs.ndim > 2) or 0 in (lhs.ndim, rhs.ndim):
        raise UncountableError
    if lhs.ndim == 2:
        m, k = _matrix(lhs.shape, transpose_a)
    else:
        m, k = math.prod(lhs.shape[:-1]), lhs.shape[-1]
    if rhs.ndim == 2:
        k_rhs, n = _matrix(rhs.shape, transpose_b)
    else:
        k_rhs, n = rhs.shape[0], math.prod(rhs.shape[1:])
    if k != k_rhs:
        raise UncountableError
    return _matrix_product(operands, 1, m, k, n, (m, n), (lhs, rhs))


def _batch_dot(operands: Operands) -> Work:
    """MXNet's ``batch_dot``: (b, m, k) x (b, k, n), either side transposable."""
    lhs, rhs = operands.require("lhs"), operands.require("rhs")
    if lhs.ndim != 3 or rhs.ndim != 3 or lhs.shape[0] != rhs.shape[0]:
        raise UncountableError
    m, k = _matrix(lhs.shape, operands.flag("transpose_a", default=False))
    k_rhs, n = _matrix(rhs.shape, operands.flag("transpose_b", default=False))
    if k != k_rhs:
        raise UncountableError
    batch = lhs.shape[0]
    return _matrix_product(operands, batch, m, k, n, (batch, m, n), (lhs, rhs))


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
        return _matrix_product(operands, math.prod(batch), m, k, n, out, (a, b))


def _linalg_gemm(operands: Operands) -> Work:
    """MXNet's ``linalg.gemm`` (alpha * op(A) op(B) + beta * C, reading C) and ``linalg.gemm2`` (no C),
    batched over equal leading axes. The O(m * n) scaling and accumulation are not counted, as in BLAS."""
    a, b, c = operands.require("A"), operands.require("B"), operands.get("C")
    if operands.attribute("axis", -2) != -2 or a.ndim < 2 or a.shape[:-2] != b.shape[:-2]:
        raise UncountableError
    m, k = _matrix(a.shape, operands.flag("transpose_a", default=False))
    k_b, n = _matrix(b.shape, operands.flag("transpose_b", default=False))
    out = (*a.shape[:-2], m, n)
    if k != k_b or (c is not None and c.shape != out):
        raise UncountableError
    reads = (a, b) if c is None else (a, b, c)
    return _matrix_product(operands, math.prod(a.shape[:-2]), m, k, n, out, reads)


def _dense(
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


def _fully_connected(operands: Operands) -> Work:
    """MXNet's ``FullyConnected``: with ``flatten``, (n, ...) data is n rows of every other axis."""
    data, weight = operands.require("data"), operands.require("weight")
    bias = None if operands.flag("no_bias", default=False) else operands.get("bias")
    num_hidden = operands.attribute("num_hidden")
    if data.ndim == 0 or (num_hidden is not None and num_hidden != weight.shape[0]):
        raise UncountableError
    if operands.flag("flatten", default=True):
        return _dense(operands, data, weight, bias, data.shape[:1], math.prod(data.shape[1:]))
    return _dense(operands, data, weight, bias, data.shape[:-1], data.shape[-1])


def _linear(operands: Operands) -> Work:
    """PyTorch's ``linear``: the last axis of ``input`` against a (out, in) ``weight``."""
    data, weight = operands.require(*DATA), operands.require("weight")
    if data.ndim == 0:
        raise UncountableError
    return _dense(operands, data, weight, operands.get("bias"), data.shape[:-1], data.shape[-1])


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


def _window(
    operands: Operands, kernel: Shape, names: tuple[str, str, str], default_stride: Shape = ()
) -> Window:
    """The window of ``kernel`` from the (stride, padding, dilation) arguments ``names``; an absent
    stride is ``default_stride`` if given, else 1."""
    dims = len(kernel)
    stride = operands.attribute(names[0], ())
    return Window(
        kernel=kernel,
        stride=default_stride if default_stride and stride == () else _per_dimension(stride, dims, 1),
        padding=_per_dimension(operands.attribute(names[1]), dims, 0),
        dilation=_per_dimension(operands.attribute(names[2]), dims, 1),
    )


MX_WINDOW = ("stride", "pad", "dilate")
TORCH_WINDOW = ("stride", "padding", "dilation")


def _convolution(
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


CHANNEL_FIRST_LAYOUTS = frozenset({None, "NCW", "NCHW", "NCDHW"})
"""MXNet layouts the convolution and pooling counters model (None: the default, channel first)."""


@dataclass(frozen=True)
class MXConvolution:
    """MXNet's ``Convolution`` and ``Deconvolution``, 1-D to 3-D, channel first. ``bias_default`` is
    ``no_bias``'s default negated: a convolution has a bias unless told otherwise, a deconvolution not."""

    transposed: bool = False
    bias_default: bool = True

    def __call__(self, operands: Operands) -> Work:
        data, weight = operands.require("data"), operands.require("weight")
        kernel = _integers(operands.attribute("kernel"))
        window = _window(operands, kernel, MX_WINDOW)
        groups = _integer(operands.attribute("num_group", 1))
        filters = weight.shape[1] * groups if self.transposed else weight.shape[0]
        if (
            operands.attribute("layout") not in CHANNEL_FIRST_LAYOUTS
            or operands.attribute("num_filter", filters) != filters
            or operands.attribute("target_shape") not in (None, ())
            or weight.shape[2:] != kernel
        ):
            raise UncountableError
        spatial = data.shape[2:]
        if self.transposed:
            out = window.deconvolved(spatial, _per_dimension(operands.attribute("adj"), len(kernel), 0))
        else:
            out = window.convolved(spatial)
        uses_bias = not operands.flag("no_bias", default=not self.bias_default)
        bias = operands.get("bias") if uses_bias else None
        return _convolution(operands, data, weight, bias, groups, out, self.transposed)


PADDING_MODES = frozenset({"same", "valid"})


@dataclass(frozen=True)
class TorchConvolution:
    """PyTorch's ``conv{1,2,3}d`` and ``conv_transpose{1,2,3}d`` on batched input, ``padding="same"``
    and ``"valid"`` included."""

    dims: int
    transposed: bool = False

    def __call__(self, operands: Operands) -> Work:
        data, weight = operands.require(*DATA), operands.require("weight")
        padding = operands.attribute("padding")
        named = isinstance(padding, str)
        if data.ndim != self.dims + 2 or (named and (padding not in PADDING_MODES or self.transposed)):
            raise UncountableError
        window = Window(
            kernel=weight.shape[2:],
            stride=_per_dimension(operands.attribute("stride"), self.dims, 1),
            padding=_per_dimension(0 if named else padding, self.dims, 0),
            dilation=_per_dimension(operands.attribute("dilation"), self.dims, 1),
        )
        spatial = data.shape[2:]
        if padding == "same":
            if window.stride != (1,) * self.dims:
                raise UncountableError
            out = spatial
        elif self.transposed:
            out = window.deconvolved(
                spatial, _per_dimension(operands.attribute("output_padding"), self.dims, 0)
            )
        else:
            out = window.convolved(spatial)
        groups = _integer(operands.attribute("groups", 1))
        return _convolution(operands, data, weight, operands.get("bias"), groups, out, self.transposed)


def _pooling(operands: Operands, data: Operand, kernel: Shape, out_spatial: Callable[[], Shape]) -> Work:
    """One operation (comparison or add) per window element per output element; the input read once."""
    leading = data.shape[: data.ndim - len(kernel)]
    outputs = operands.outputs(lambda: ((*leading, *out_spatial()),))
    return operands.work(math.prod(kernel) * math.prod(outputs[0]), outputs, reads=(data,))


MX_POOL_TYPES = frozenset({"max", "avg", "sum"})
"""MXNet pooling types counted; ``lp`` (p-norms) is not."""
MX_POOLING_CONVENTIONS: Mapping[str, bool] = {"valid": False, "full": True}
"""MXNet's output-length conventions, to whether they round up; ``same`` is not modelled."""


def _mx_pooling(operands: Operands) -> Work:
    """MXNet's ``Pooling``, 1-D to 3-D, channel first; a global pool's window is the whole input."""
    data = operands.require("data")
    if (
        operands.attribute("pool_type", "max") not in MX_POOL_TYPES
        or operands.attribute("layout") not in CHANNEL_FIRST_LAYOUTS
        or data.ndim < 3
    ):
        raise UncountableError
    if operands.flag("global_pool", default=False):
        spatial = data.shape[2:]
        return _pooling(operands, data, spatial, lambda: (1,) * len(spatial))
    window = _window(operands, _integers(operands.attribute("kernel")), MX_WINDOW)
    convention = operands.attribute("pooling_convention", "valid")

    def out_spatial() -> Shape:
        if convention not in MX_POOLING_CONVENTIONS or data.ndim != len(window.kernel) + 2:
            raise UncountableError
        return window.pooled(data.shape[2:], ceil=MX_POOLING_CONVENTIONS[convention], clamp=False)

    return _pooling(operands, data, window.kernel, out_spatial)


@dataclass(frozen=True)
class TorchPooling:
    """PyTorch's ``max_pool{1,2,3}d`` and ``avg_pool{1,2,3}d``, batched or not; the stride defaults to
    the kernel."""

    dims: int

    def __call__(self, operands: Operands) -> Work:
        data, kernel_size = operands.require(*DATA), operands.attribute("kernel_size")
        if kernel_size is None or data.ndim not in (self.dims + 1, self.dims + 2):
            raise UncountableError
        kernel = _per_dimension(kernel_size, self.dims, 1)
        window = _window(operands, kernel, TORCH_WINDOW, default_stride=kernel)
        ceil = operands.flag("ceil_mode", default=False)
        return _pooling(
            operands, data, kernel, lambda: window.pooled(data.shape[-self.dims :], ceil=ceil, clamp=True)
        )


ELEMENTWISE = Elementwise()
BOOLEAN_RESULT = Elementwise(output_itemsize=BOOL_ITEMSIZE)

# MXNet operator names by counter: registry names (canonical and alias) and the Python names the typed
# API records for front ends (``mx.nd.add``, ``mx.np.matmul``).
_MX_UNARY = (
    "abs", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "cbrt", "cos", "cosh",
    "degrees", "erf", "erfinv", "exp", "expm1", "gamma", "gammaln", "log", "log10", "log1p", "log2",
    "logical_not", "negative", "radians", "reciprocal", "sign", "sin", "sinh", "sqrt", "square", "tan",
    "tanh", "relu", "ceil", "fix", "floor", "rint", "round", "trunc",
    "_npi_absolute", "_npi_arccos", "_npi_arccosh", "_npi_arcsin", "_npi_arcsinh", "_npi_arctan",
    "_npi_arctanh", "_npi_cbrt", "_npi_ceil", "_npi_cos", "_npi_cosh", "_npi_degrees", "_npi_exp",
    "_npi_expm1", "_npi_fix", "_npi_floor", "_npi_log", "_npi_log10", "_npi_log1p", "_npi_log2",
    "_npi_negative", "_npi_radians", "_npi_reciprocal", "_npi_rint", "_npi_sign", "_npi_sin",
    "_npi_sinh", "_npi_sqrt", "_npi_square", "_npi_tan", "_npi_tanh", "_npi_trunc", "_npx_relu",
)  # fmt: skip
_MX_UNARY_TO_BOOLEAN = (
    "_npi_logical_not", "_npi_isfinite", "_npi_isinf", "_npi_isnan", "_npi_isneginf", "_npi_isposinf",
)  # fmt: skip
_MX_BINARY = (
    "broadcast_add", "broadcast_plus", "broadcast_sub", "broadcast_minus", "broadcast_mul",
    "broadcast_div", "broadcast_mod", "broadcast_power", "broadcast_maximum", "broadcast_minimum",
    "broadcast_equal", "broadcast_not_equal", "broadcast_greater", "broadcast_greater_equal",
    "broadcast_lesser", "broadcast_lesser_equal", "broadcast_logical_and", "broadcast_logical_or",
    "broadcast_logical_xor", "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div",
    "_npi_add", "_npi_subtract", "_npi_multiply", "_npi_true_divide", "_npi_mod", "_npi_power",
    "_npi_arctan2", "_npi_copysign",
    "add", "subtract", "multiply", "divide", "true_divide", "maximum", "minimum", "power",
)  # fmt: skip
_MX_BINARY_TO_BOOLEAN = (
    "_npi_equal", "_npi_not_equal", "_npi_greater", "_npi_greater_equal", "_npi_less", "_npi_less_equal",
)  # fmt: skip
_MX_SCALAR = (
    "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar", "_rdiv_scalar",
    "_mod_scalar", "_rmod_scalar", "_power_scalar", "_rpower_scalar", "_maximum_scalar",
    "_minimum_scalar", "_equal_scalar", "_not_equal_scalar", "_greater_scalar", "_greater_equal_scalar",
    "_lesser_scalar", "_lesser_equal_scalar", "_logical_and_scalar", "_logical_or_scalar",
    "_logical_xor_scalar",
    "_npi_add_scalar", "_npi_subtract_scalar", "_npi_rsubtract_scalar", "_npi_multiply_scalar",
    "_npi_true_divide_scalar", "_npi_rtrue_divide_scalar", "_npi_mod_scalar", "_npi_rmod_scalar",
    "_npi_power_scalar", "_npi_rpower_scalar", "_npi_arctan2_scalar", "_npi_rarctan2_scalar",
    "_npi_copysign_scalar", "_npi_rcopysign_scalar",
)  # fmt: skip
_MX_SCALAR_TO_BOOLEAN = (
    "_npi_equal_scalar", "_npi_not_equal_scalar", "_npi_greater_scalar", "_npi_greater_equal_scalar",
    "_npi_less_scalar", "_npi_less_equal_scalar",
)  # fmt: skip
_MX_REDUCTIONS = (
    "sum", "sum_axis", "mean", "max", "max_axis", "min", "min_axis", "prod",
    "_np_sum", "_npi_mean", "_np_max", "_np_min", "_np_prod",
)  # fmt: skip
_MX_GEMM = ("_linalg_gemm", "_linalg_gemm2", "linalg_gemm", "linalg_gemm2", "gemm", "gemm2")

MXNET_COUNTERS: Mapping[str, Counter] = {
    **dict.fromkeys(_MX_UNARY + _MX_BINARY + _MX_SCALAR, ELEMENTWISE),
    **dict.fromkeys(_MX_UNARY_TO_BOOLEAN + _MX_BINARY_TO_BOOLEAN + _MX_SCALAR_TO_BOOLEAN, BOOLEAN_RESULT),
    **dict.fromkeys(("rsqrt", "rcbrt"), Elementwise(RECIPROCAL_ROOT_FLOPS)),
    **dict.fromkeys(("sigmoid", "_npx_sigmoid"), Elementwise(SIGMOID_FLOPS)),
    **dict.fromkeys(("broadcast_hypot", "_npi_hypot", "_hypot_scalar"), Elementwise(HYPOT_FLOPS)),
    "softsign": Elementwise(SOFTSIGN_FLOPS),
    "hard_sigmoid": Elementwise(HARD_SIGMOID_FLOPS),
    "Activation": _activation,
    **dict.fromkeys(_MX_REDUCTIONS, Reduction()),
    **dict.fromkeys(("nansum", "nanprod"), Reduction(NAN_SKIPPING_FLOPS)),
    **dict.fromkeys(("norm", "_square_sum"), Reduction(SQUARE_SUM_FLOPS)),
    "dot": _dot,
    "batch_dot": _batch_dot,
    **dict.fromkeys(_MX_GEMM, _linalg_gemm),
    **dict.fromkeys(("_npi_matmul", "matmul"), Matmul(a=("a",), b=("b",))),
    "_np_dot": Matmul(a=("a",), b=("b",), batched=False),
    "FullyConnected": _fully_connected,
    **dict.fromkeys(("Convolution", "Convolution_v1"), MXConvolution()),
    "Deconvolution": MXConvolution(transposed=True, bias_default=False),
    **dict.fromkeys(("Pooling", "Pooling_v1"), _mx_pooling),
    **dict.fromkeys(("softmax", "log_softmax", "softmin", "SoftmaxActivation"), Softmax()),
    # opperf runs MXNet in training mode: BatchNorm computes batch statistics unless told to use the
    # running ones.
    **dict.fromkeys(
        ("BatchNorm", "BatchNorm_v1"), Normalization(lambda o: not o.flag("use_global_stats", default=False))
    ),
    **dict.fromkeys(("LayerNorm", "GroupNorm", "InstanceNorm"), Normalization()),
}
"""MXNet operators' counters, by name."""

TORCH_INPUT = ("input", "self")

_TORCH_ELEMENTWISE = (
    "add", "sub", "mul", "div", "maximum", "minimum", "pow", "remainder", "fmod", "atan2", "abs", "neg",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "square", "reciprocal", "sin", "cos",
    "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "erf", "sign", "relu", "floor", "ceil",
    "round", "trunc",
)  # fmt: skip

TORCH_COUNTERS: Mapping[str, Counter] = {
    **dict.fromkeys(_TORCH_ELEMENTWISE, ELEMENTWISE),
    **dict.fromkeys(("eq", "ne", "lt", "le", "gt", "ge"), BOOLEAN_RESULT),
    "rsqrt": Elementwise(RECIPROCAL_ROOT_FLOPS),
    "sigmoid": Elementwise(SIGMOID_FLOPS),
    "hypot": Elementwise(HYPOT_FLOPS),
    **dict.fromkeys(("sum", "mean", "amax", "amin", "prod"), Reduction(axis="dim", keepdims="keepdim")),
    "matmul": Matmul(a=TORCH_INPUT, b=("other",)),
    "mm": Matmul(a=TORCH_INPUT, b=("mat2",), batched=False),
    "bmm": Matmul(a=TORCH_INPUT, b=("mat2",)),
    "linear": _linear,
    **{f"conv{dims}d": TorchConvolution(dims) for dims in (1, 2, 3)},
    **{f"conv_transpose{dims}d": TorchConvolution(dims, transposed=True) for dims in (1, 2, 3)},
    **{f"{kind}_pool{dims}d": TorchPooling(dims) for kind in ("max", "avg") for dims in (1, 2, 3)},
    **dict.fromkeys(("softmax", "log_softmax"), Softmax(data=TORCH_INPUT)),
    "batch_norm": Normalization(lambda o: o.flag("training"), data=TORCH_INPUT),
    "instance_norm": Normalization(lambda o: o.flag("use_input_stats"), data=TORCH_INPUT),
    **dict.fromkeys(("layer_norm", "group_norm"), Normalization(data=TORCH_INPUT)),
}
"""PyTorch operators' counters, by aten name; tensor arguments go by their Python names (``input``,
``other``, ``weight``)."""

COUNTERS: Mapping[str, Mapping[str, Counter]] = {"mxnet": MXNET_COUNTERS, "torch": TORCH_COUNTERS}
"""Counters by framework, then operator name."""


def count_work(spec: BenchmarkSpec, output_shapes: tuple[Shape, ...] | None = None) -> Work | None:
    """The bytes ``spec``'s operator moves and the FLOPs it does, or None where they cannot be counted.

    ``output_shapes`` (the shapes of the outputs a run produced) replace the shapes the counter
    computes, and let it count operators whose output shape the arguments leave open.

    >>> from opperf.results import freeze_inputs
    >>> add = BenchmarkSpec("mxnet", "mx.nd", "broadcast_add",
    ...                     freeze_inputs({"lhs": TensorSpec((1024, 1024)), "rhs": TensorSpec((1024, 1024))}))
    >>> count_work(add)
    Work(bytes_moved=12582912, flops=1048576)
    """
    counter = COUNTERS.get(spec.framework, {}).get(spec.op)
    if counter is None:
        return None
    try:
        return counter(Operands.of(spec, output_shapes))
    except UncountableError:
        return None
