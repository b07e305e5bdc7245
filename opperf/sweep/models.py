"""Which model to capture: a framework's built-in models (``frameworks/<name>/models.py``) or a user's
``module:callable``, and the capture of one into a ``ConfigsFile``.

A user's callable takes no arguments and returns ``(model, example_inputs)``: the framework's model
(a Gluon ``Block``, a ``torch.nn.Module`` or a JAX function), and a tuple of what it is called with.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from opperf.results.configs import Captured, ConfigsFile, Header, distinct
from opperf.utils.errors import OpperfError, suggest

T = TypeVar("T")


@dataclass(frozen=True)
class BuiltInModel:
    """A model opperf ships: its name, default input shape, and a builder taking an input shape."""

    name: str
    default_shape: tuple[int, ...]
    build: Callable[[tuple[int, ...]], tuple[object, tuple]]
    description: str = ""


@dataclass(frozen=True)
class LoadedModel:
    """A model ready to run: what it is called, the model object, its example inputs and their shape."""

    name: str
    model: object
    inputs: tuple
    input_shape: tuple[int, ...]


def built_in(framework: str) -> dict[str, BuiltInModel]:
    from opperf.frameworks import capability_part

    return capability_part(framework, "capture", "models").MODELS


def built_in_names() -> str:
    """Each framework's built-in models, as help names them (``jax: mlp, resnet; mxnet: ...``), read
    from its ``models`` module (which imports no framework)."""
    from opperf.frameworks import FRAMEWORKS, describe

    having = [name for name in sorted(FRAMEWORKS) if describe(name).can("capture")]
    return "; ".join(  # an alias (mxnet's resnet18) goes unnamed
        f"{name}: {', '.join(key for key, model in built_in(name).items() if key == model.name)}"
        for name in having
    )


def load_model(framework: str, name: str, shape: tuple[int, ...] | None) -> LoadedModel:
    """A built-in model by name (built at ``shape`` or its default), or ``module:callable``."""
    from opperf.frameworks import get_backend

    get_backend(framework)  # the framework must be installed
    if ":" in name:
        if shape is not None:
            raise OpperfError(
                f"--input-shape sets a built-in model's input shape; {name} makes its own example inputs "
                "(change them in the callable, or leave --input-shape out)"
            )
        return _user_model(name)
    models = built_in(framework)
    if name not in models:
        raise OpperfError(
            f"unknown {framework} model {name!r}{suggest(name, models)}; built-in: "
            + ", ".join(
                f"{key} ({model.description})" if model.description else key for key, model in models.items()
            )
            + ", or module:callable returning (model, example_inputs)"
        )
    chosen = models[name]
    shape = shape or chosen.default_shape
    if len(shape) != len(chosen.default_shape):
        raise OpperfError(
            f"{name} takes a {len(chosen.default_shape)}-dimensional input shape such as "
            f"{','.join(map(str, chosen.default_shape))}; got {','.join(map(str, shape))}"
        )
    model, inputs = running(name, "building it", lambda: chosen.build(tuple(shape)))
    return LoadedModel(name, model, inputs, tuple(shape))


def running(model: str, doing: str, call: Callable[[], T]) -> T:
    """``call()``; a model's own exception, or its ``sys.exit``, becomes an OpperfError naming the
    model and what failed (a user's model, or a built-in one at an input shape it cannot take). The
    working directory is this process's again after it: a model that moves elsewhere does not take
    the output files, named relative to where the user is, with it."""
    directory = os.getcwd()
    try:
        return call()
    except OpperfError:
        raise
    except SystemExit as stop:
        raise OpperfError(
            f"model {model} called sys.exit({stop.code!r}) while {doing}: a model returns, it does not end "
            "the process (nothing was written)"
        ) from None
    except Exception as error:
        raise OpperfError(f"model {model} failed while {doing}: {type(error).__name__}: {error}") from None
    finally:
        os.chdir(directory)


def _user_model(reference: str) -> LoadedModel:
    module_name, _, attribute = reference.partition(":")
    if not all(part.isidentifier() for part in module_name.split(".")) or not attribute.isidentifier():
        raise OpperfError(
            f"cannot load model {reference!r}: write module:callable, a module importable from here and "
            "a function in it, e.g. mymodels:resnet"
        )
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")

    def imported() -> object:
        try:
            return importlib.import_module(module_name)
        except ImportError as error:
            raise OpperfError(f"cannot load model {reference!r}: {error}") from None

    module = running(reference, "importing it", imported)
    try:
        factory = getattr(module, attribute)
    except AttributeError as error:
        raise OpperfError(f"cannot load model {reference!r}: {error}") from None
    returned = running(reference, "building it", factory)
    if not (isinstance(returned, tuple) and len(returned) == 2):
        raise OpperfError(f"{reference} must return (model, example_inputs), got {type(returned).__name__}")
    model, inputs = returned
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    shape = tuple(int(d) for d in inputs[0].shape) if inputs and hasattr(inputs[0], "shape") else ()
    return LoadedModel(reference, model, inputs, shape)


def capture_model(
    framework: str, loaded: LoadedModel, mode: str, captured: Captured | None = None
) -> ConfigsFile:
    """Run ``loaded`` once (forward, and backward in training mode) recording its operator calls (or
    take what a capture already ``captured``) as a configs file."""
    from opperf.frameworks import capability_part, get_backend

    capture = capability_part(framework, "capture", "capture")
    captured = captured or running(
        loaded.name, "running it", lambda: capture.capture(loaded.model, loaded.inputs, mode)
    )
    if not captured.calls:
        left_out = ", ".join(f"{reason}: {count}" for reason, count in sorted(captured.filtered.items()))
        raise OpperfError(
            f"model {loaded.name} made no {framework} operator call opperf replays, so there is nothing to "
            "capture: " + (f"every call it made was left out ({left_out})" if left_out else "it calls none")
        )
    environment = get_backend(framework).environment()
    header = Header(
        framework=framework,
        framework_version=str(environment.get("framework_version", "")),
        model=loaded.name,
        input_shape=loaded.input_shape,
        mode=mode,
        captured_by=capture.captured_by(mode),
        filtered=dict(sorted(captured.filtered.items())),
        calls=len(captured.calls),
    )
    return ConfigsFile(header, distinct(captured.calls, tags=(loaded.name,)))
