"""DLOP-Bench's per-operator configuration files read as an opperf configs file (``--configs dlop:PATH``).

DLOP-Bench (DeepLink-org) keeps, per operator, one JSON object of index-aligned argument lists
recorded from OpenMMLab models (``bench/samples/basic/conv2dBP/conv2d.json``: 1,831 convolutions,
``{"input_size": [[4, 3, 224, 224], ...], "kernel_size": [[64, 3, 3, 3], ...], "bias": [[0], ...],
"stride": [[1, 1], ...], ...}``); configuration i is element i of every list. Its key names are the
sample's own, adapted to a call by each sample's Python; ``ADAPTERS`` states that adaptation as data
for the files opperf reads, and any other file is read by the plain rule: a key named as an argument
of the operator its file is named after is that argument's value, ``<argument>_size`` a tensor
argument's shape. DLOP-Bench runs an unseeded 1% sample of a file; ``--configs-sample N`` draws a
seeded one, so a run repeats.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any

from opperf.results.configs import ArgumentLookup, ConfigsFile, Configuration, Header, check_arguments
from opperf.results.measurement import InputValue, TensorSpec, freeze_inputs, input_from_json
from opperf.utils.errors import OpperfError
from opperf.utils.reading import read_text

PREFIX = "dlop:"
FRAMEWORK = "torch"

Row = Mapping[str, Any]


def _conv2d(row: Row) -> dict[str, InputValue]:
    """DLOP's conv2d sample: ``kernel_size`` is the weight's shape, ``bias`` [0] or [1] whether there is
    one (of the weight's output channels), ``groups`` a one-element list."""
    weight = _tensor(row["kernel_size"])
    return {
        "input": _tensor(row["input_size"]),
        "weight": weight,
        "bias": TensorSpec((weight.shape[0],)) if row["bias"][0] else None,
        "stride": _value(row["stride"]),
        "padding": _value(row["padding"]),
        "dilation": _value(row["dilation"]),
        "groups": _value(row["groups"][0]),
    }


def _tensor(shape: object) -> TensorSpec:
    """A tensor of ``shape`` (a list of sizes); ValueError for anything else."""
    tensor = input_from_json({"shape": shape})
    if not isinstance(tensor, TensorSpec) or not tensor.shape:
        raise ValueError(f"a tensor's shape is {shape!r}; it is a list of non-negative integers")
    return tensor


def _value(value: object) -> InputValue:
    """A plain argument value (a number, a list of them); ValueError for an object."""
    if isinstance(value, dict):
        raise ValueError(f"{value!r} is no argument value")
    return input_from_json(value)


ADAPTERS: Mapping[str, tuple[str, Callable[[Row], dict[str, InputValue]]]] = {"conv2d": ("conv2d", _conv2d)}
"""DLOP file name (without .json) -> (opperf operator, one row's opperf inputs)."""


def _plain(op: str, accepted: frozenset[str]) -> Callable[[Row], dict[str, InputValue]]:
    def adapt(row: Row) -> dict[str, InputValue]:
        inputs: dict[str, InputValue] = {}
        for key, value in row.items():
            if key.endswith("_size") and key[: -len("_size")] in accepted:
                inputs[key[: -len("_size")]] = _tensor(value)
            else:
                inputs[key] = _value(value)
        return inputs

    return adapt


def is_dlop(reference: str) -> bool:
    return reference.startswith(PREFIX)


def read_dlop(reference: str, arguments: ArgumentLookup, framework: str | None = None) -> ConfigsFile:
    """The configurations of the DLOP-Bench file ``dlop:PATH``, one per index, counted once each; a
    ``framework`` other than DLOP-Bench's (PyTorch) is refused before the file is read."""
    path = reference[len(PREFIX) :]
    if framework is not None and framework != FRAMEWORK:
        raise OpperfError(
            f"{path} is a DLOP-Bench file of {FRAMEWORK} configurations; replay it with --framework "
            f"{FRAMEWORK}, or leave --framework out"
        )
    try:
        columns = json.loads(read_text(path))
    except OSError as error:
        raise OpperfError(f"cannot read DLOP-Bench file {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise OpperfError(f"{path}: not a DLOP-Bench file (not JSON: {error.msg})") from None
    except (ValueError, RecursionError):  # not UTF-8, nested too deep, a number of 4,300+ digits
        raise OpperfError(f"{path}: not a DLOP-Bench file (not JSON text)") from None
    lengths = (
        {len(v) for v in columns.values() if isinstance(v, list)} if isinstance(columns, dict) else set()
    )
    if not lengths or len(lengths) != 1 or len(columns) != sum(isinstance(v, list) for v in columns.values()):
        raise OpperfError(
            f"{path}: not a DLOP-Bench file: expected one JSON object of equally long argument lists"
        )
    stem = os.path.splitext(os.path.basename(path))[0]
    op, adapt = ADAPTERS.get(stem, (stem, None))
    accepted = arguments(op)
    if accepted is None:
        raise OpperfError(
            f"{path}: DLOP-Bench operator {stem!r} is no {FRAMEWORK} registry operator; opperf reads "
            f"{', '.join(sorted(ADAPTERS))} and files named after an operator"
        )
    adapt = adapt or _plain(op, accepted)
    configurations = []
    for index in range(lengths.pop()):
        row = {key: values[index] for key, values in columns.items()}
        where = f"{path}: configuration {index}"
        try:
            inputs = adapt(row)
        except (KeyError, IndexError, TypeError, ValueError) as error:
            problem = f"no key {error}" if isinstance(error, KeyError) else str(error)
            raise OpperfError(f"{where}: {problem}") from None
        # Ignored: mypy cannot type a lambda with a default argument (the loop's value).
        check_arguments(op, inputs, arguments, lambda m, w=where: OpperfError(f"{w}: {m}"))  # type: ignore[misc]
        configurations.append(Configuration(op, freeze_inputs(inputs), 1, ("dlop",), where))
    header = Header(framework=FRAMEWORK, model=reference, captured_by="a DLOP-Bench configuration file")
    return ConfigsFile(header, tuple(configurations))
