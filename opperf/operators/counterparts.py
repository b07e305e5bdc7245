"""Names a user brings from another framework: what a selection error offers instead.

``conv2d`` is torch's name for what MXNet calls ``Convolution``; ``torch.nn.functional.cross_entropy``
is no one operator but a Python function calling two (``log_softmax``, then ``nll_loss``). Each
framework declares its names as data (``frameworks/<name>/counterparts.py``: (job, operator) pairs
in a shared vocabulary of jobs, and its functions that call several operators);
``tests/test_counterparts.py`` checks them against the registries. No framework is imported here.
"""

from __future__ import annotations

from types import ModuleType

from opperf.frameworks import FRAMEWORKS, framework_module


def _names(framework: str) -> ModuleType:
    return framework_module(framework, "counterparts")


def display_name(framework: str) -> str:
    """How messages name ``framework`` (``MXNet``, ``torch``)."""
    return str(_names(framework).DISPLAY_NAME)


def counterparts(framework: str, name: str) -> tuple[str, ...]:
    """``framework``'s operators doing a job another framework calls ``name``, in its table's order."""
    jobs = {
        job
        for other in FRAMEWORKS
        if other != framework
        for job, operator in _names(other).JOBS
        if operator == name
    }
    return tuple(dict.fromkeys(operator for job, operator in _names(framework).JOBS if job in jobs))


def several_operators(framework: str, name: str) -> tuple[str, ...]:
    """The operators ``framework``'s public function ``name`` calls, where it calls several; else ()."""
    return tuple(_names(framework).SEVERAL_OPERATORS.get(name, ()))
