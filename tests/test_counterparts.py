"""Names from the other framework, and functions that call several operators, get an error that says
what to select instead; the tables behind it hold real registry names, and the functions really call
what the table says."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional
from torch.utils._python_dispatch import TorchDispatchMode

from opperf.cli import main
from opperf.frameworks import framework_module, get_backend
from opperf.operators.counterparts import counterparts
from opperf.sweep.run import canonical_names

TORCH_NAMES = framework_module("torch", "counterparts")
MXNET_NAMES = framework_module("mxnet", "counterparts")


@pytest.fixture(scope="module")
def registry_names():
    return {name: canonical_names(get_backend(name).operators()) for name in ("torch", "mxnet")}


def test_every_counterpart_is_a_registry_operator_of_its_framework(registry_names):
    for framework, names in (("torch", TORCH_NAMES), ("mxnet", MXNET_NAMES)):
        for _, operator in names.JOBS:
            assert operator in registry_names[framework], (framework, operator)
    torch_of = dict(TORCH_NAMES.JOBS)
    for job, mxnet_name in MXNET_NAMES.JOBS:
        torch_name = torch_of[job]
        # A name the other framework has selects its own operator there: a pair must help one way.
        assert torch_name not in registry_names["mxnet"] or mxnet_name not in registry_names["torch"]


def test_counterparts_go_both_ways():
    assert counterparts("mxnet", "conv2d") == ("Convolution",)
    assert counterparts("torch", "Convolution") == ("conv1d", "conv2d", "conv3d")
    assert counterparts("mxnet", "exp") == ()


class _AtenCalls(TorchDispatchMode):
    """The aten operators a Python function calls, in registry spelling (``_softmax`` is ``softmax``,
    ``nll_loss_forward`` is ``nll_loss``)."""

    def __init__(self) -> None:
        super().__init__()
        self.called: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func._schema.name.split("::")[1]
        self.called.add(name.lstrip("_").removesuffix("_forward").removesuffix("_"))
        return func(*args, **(kwargs or {}))


EXAMPLES = {
    "cross_entropy": lambda: functional.cross_entropy(torch.randn(4, 5), torch.tensor([0, 1, 2, 3])),
    "softmin": lambda: functional.softmin(torch.randn(4, 5), dim=1),
    "normalize": lambda: functional.normalize(torch.randn(4, 5)),
    "local_response_norm": lambda: functional.local_response_norm(torch.randn(2, 3, 4, 4), 2),
}


@pytest.mark.parametrize("function", sorted(TORCH_NAMES.SEVERAL_OPERATORS))
def test_a_function_calls_the_operators_the_table_names(function, registry_names):
    with _AtenCalls() as calls:
        EXAMPLES[function]()
    named = TORCH_NAMES.SEVERAL_OPERATORS[function]
    assert set(named) <= calls.called, calls.called
    assert all(op in registry_names["torch"] for op in named)
    assert function not in registry_names["torch"]  # no one operator is what it is


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["list", "--ops", "conv2d"], "select it with --framework torch; MXNet's operator is Convolution"),
        (["list", "--ops", "F.max_pool2d"], "MXNet's operator is Pooling"),
        (["list", "--framework", "torch", "--ops", "FullyConnected"],
         "PyTorch's operators are linear, addmm"),
        (["list", "--framework", "torch", "--ops", "cross_entropy"],
         "cross_entropy calls several operators (log_softmax, nll_loss), not one; "
         "select those: --ops log_softmax,nll_loss"),
        (["list", "--framework", "torch", "--ops", "torch.nn.functional.softmin"], "--ops neg,softmax"),
        (["list", "--ops", "exq"], "did you mean exp"),
    ],
)  # fmt: skip
def test_the_error_says_what_to_select_instead(argv, expected, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and expected in err, err


def test_the_names_the_error_offers_select_operators(capsys):
    assert main(["list", "--framework", "torch", "--ops", "log_softmax,nll_loss"]) == 0
    assert main(["list", "--ops", "Convolution"]) == 0
    listed = capsys.readouterr().out.split()
    assert {"log_softmax", "nll_loss", "Convolution"} <= set(listed)
