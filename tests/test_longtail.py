"""Long-tail operators: the catalogue, both frameworks' implementations agreeing on the same inputs,
their registry entries, and selection by tag on the command line."""

from __future__ import annotations

import numpy as np
import pytest

from opperf.cli import main
from opperf.frameworks import get_backend
from opperf.measure.stages import compare
from opperf.operators import longtail
from opperf.operators.rules import inputs_for
from opperf.operators.values import host_values
from opperf.results.measurement import TensorSpec, is_tensor_list
from opperf.sweep.run import select_operators

NAMES = [op.name for op in longtail.catalogue()]


def test_the_catalogue_holds_the_twenty_with_tags_from_the_vocabulary_and_a_source_each():
    assert len(NAMES) == len(set(NAMES)) == 20
    for op in longtail.catalogue():
        assert op.tags and set(op.tags) <= set(longtail.TAGS), op.name
        assert op.source and op.origin and op.computes, op.name
        assert len(op.configurations()) == len(op.sizes) >= 2, op.name
    assert "torch.jit.script" not in longtail.entry("nms_loop").source  # a source, not a claim
    assert longtail.members("ForLoop") == ("bbox2roi", "nms_loop")


@pytest.mark.parametrize("framework", ["mxnet", "torch"])
def test_each_framework_registers_every_long_tail_operator_under_its_own_name(framework):
    backend = get_backend(framework)
    chosen = select_operators(backend, (), (longtail.CATEGORY,))
    assert [op.name for op in chosen] == NAMES
    registered = backend.registered_names()
    assert all(registered.count(name) == 1 for name in NAMES)  # no registry operator shares a name
    assert [len(inputs_for(op)) for op in chosen] == [len(op.sizes) for op in longtail.catalogue()]


def _inputs(op: longtail.LongTailOp, rng: np.random.Generator) -> dict[str, object]:
    """The small configuration's values as numpy arrays (lists of them for tensor lists), scalars as is."""
    values = {}
    for name, value in op.configure(*op.small).items():
        if isinstance(value, TensorSpec):
            values[name] = host_values(value, "float32", rng)
        elif is_tensor_list(value):
            values[name] = [host_values(v, "float32", rng) for v in value]
        else:
            values[name] = value
    return values


def _converted(values: dict[str, object], convert) -> dict[str, object]:
    return {
        name: [convert(v) for v in value]
        if isinstance(value, list)
        else convert(value)
        if isinstance(value, np.ndarray)
        else value
        for name, value in values.items()
    }


def _flat(outputs: object) -> list:
    if isinstance(outputs, (tuple, list)):
        return [array for item in outputs for array in _flat(item)]
    return [outputs]


@pytest.mark.parametrize("name", NAMES)
def test_both_frameworks_compute_the_same_outputs_from_the_same_inputs(name):
    import mxnet as mx
    import torch

    from opperf.frameworks.mxnet.longtail import IMPLEMENTATIONS as MXNET
    from opperf.frameworks.torch.longtail import IMPLEMENTATIONS as TORCH

    op = longtail.entry(name)
    values = _inputs(op, np.random.default_rng(7))
    by_torch = _flat(TORCH[name](**_converted(values, torch.from_numpy)))
    by_mxnet = _flat(MXNET[name](mx.nd, **_converted(values, lambda a: mx.nd.array(a, dtype=a.dtype))))
    torch_arrays = [t.numpy() for t in by_torch]
    check = compare(torch_arrays, [a.asnumpy() for a in by_mxnet])
    assert check.agrees, f"{name}: {check.detail}"
    assert any(np.any(a != 0) for a in torch_arrays), f"{name}: all outputs zero, a check that cannot fail"


def test_select_by_any_tag_or_by_every_tag():
    backend = get_backend("mxnet")
    any_of = {op.name for op in select_operators(backend, (), (), ("ForLoop", "InputAware"))}
    assert any_of == {"bbox2roi", "nms_loop", "sequence_mask", "make_positions"}
    every = {op.name for op in select_operators(backend, (), (), ("ForLoop", "InputAware"), tags_all=True)}
    assert every == {"nms_loop"}


def _run(capsys, *arguments: str) -> tuple[int, str, str]:
    code = main(list(arguments))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_list_tags_shows_each_tag_with_its_count_and_members(capsys):
    code, out, _ = _run(capsys, "list", "--framework", "mxnet", "--tags")
    assert code == 0
    rows = {line.split()[0]: line.split(None, 2) for line in out.splitlines() if line[:1].isupper()}
    assert rows["ForLoop"][1] == "2" and rows["ForLoop"][2] == "bbox2roi, nms_loop"
    assert rows["ViewAttribute"][1] == str(len(longtail.members("ViewAttribute")))
    assert "over 20 long-tail operators" in out


def test_list_by_tag_and_explain_a_long_tail_operator(capsys):
    code, out, _ = _run(capsys, "list", "--framework", "torch", "--tags", "Broadcast")
    assert code == 0 and "tblr2bbox" in out and "sequence_mask" in out and "bbox2delta" not in out
    code, out, _ = _run(capsys, "explain", "bbox2roi", "--framework", "torch")
    assert code == 0
    assert "tags:        ForLoop, IfElseBranch" in out
    assert "mmdetection" in out and "bbox_list=[32x4, 32x4" in out


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("list", "--tags", "Forloop"), "unknown tag 'Forloop'; did you mean ForLoop?"),
        (("list", "--tags-all"), "--tags-all narrows --tags"),
        (("sweep", "--stages", "eager,jit", "--categories", "longtail"), "unknown stage 'jit'"),
        # a framework without long-tail operators selected nothing, and swept it with exit 0
        (("sweep", "--framework", "jax", "--tags", "ForLoop"), "no JAX operator carries --tags ForLoop"),
        (("list", "--framework", "jax", "--tags", "ForLoop"), "long-tail operators of MXNet and PyTorch"),
        (
            ("sweep", "--tags", "ForLoop,Broadcast", "--tags-all"),
            "carries every one of --tags ForLoop,Broadcast",
        ),
    ],
)
def test_bad_tags_and_stages_are_usage_errors(arguments, message, capsys):
    try:
        code = main(list(arguments))
    except SystemExit as exit_info:  # argparse's own refusal
        code = exit_info.code
    assert code == 2
    assert message in capsys.readouterr().err
