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

from opperf.configs import ArgumentLookup, ConfigsFile, Configuration, Header, check_arguments
from opperf.errors import OpperfError
from opperf.results import InputValue, TensorSpec, freeze_inputs

PREFIX = "dlop:"
FRAMEWORK = "torch"

Row = Mapping[str, object]


def _conv2d(row: Row) -> dict[str, InputValue]:
    """DLOP's conv2d sample: ``kernel_size`` is the weight's shape, ``bias`` [0] or [1] whether there is
    one (of the weight's output channels), ``groups`` a one-element list."""
    weight = tuple(row["kernel_size"])
    return {
        "input": TensorSpec(tuple(row["input_size"])),
        "weight": TensorSpec(weight),
        "bias": TensorSpec((weight[0],)) if row["bias"][0] else None,
        "stride": tuple(row["stride"]),
        "padding": tuple(row["padding"]),
        "dilation": tuple(row["dilation"]),
        "groups": row["groups"][0],
    }


ADAPTERS: Mapping[str, tuple[str, Callable[[Row], dict[str, InputValue]]]] = {"conv2d": ("conv2d", _conv2d)}
"""DLOP file name (without .json) -> (opperf operator, one row's opperf inputs)."""


def _plain(op: str, accepted: frozenset[str]) -> Callable[[Row], dict[str, InputValue]]:
    def adapt(row: Row) -> dict[str, InputValue]:
        inputs: dict[str, InputValue] = {}
        for key, value in row.items():
            if key.endswith("_size") and key[: -len("_size")] in accepted:
                inputs[key[: -len("_size")]] = TensorSpec(tuple(value))
            else:
                inputs[key] = tuple(value) if isinstance(value, list) else value
        return inputs

    return adapt


def is_dlop(reference: str) -> bool:
    return reference.startswith(PREFIX)


def read_dlop(reference: str, arguments: ArgumentLookup) -> ConfigsFile:
    """The configurations of the DLOP-Bench file ``dlop:PATH``, one per index, counted once each."""
    path = reference[len(PREFIX) :]
    try:
        with open(path, encoding="utf-8") as handle:
            columns = json.load(handle)
    except OSError as error:
        raise OpperfError(f"cannot read DLOP-Bench file {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise OpperfError(f"{path}: not a DLOP-Bench file (not JSON: {error.msg})") from None
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
        inputs = adapt(row)
        check_arguments(
            op, inputs, arguments, lambda m, i=index: OpperfError(f"{path}: configuration {i}: {m}")
        )
        configurations.append(Configuration(op, freeze_inputs(inputs), 1, ("dlop",)))
    header = Header(framework=FRAMEWORK, model=reference, captured_by="a DLOP-Bench configuration file")
    return ConfigsFile(header, tuple(configurations))
