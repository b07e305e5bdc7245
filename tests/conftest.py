"""Shared fixtures: the real MXNet backend and small, fast run settings."""

from __future__ import annotations

import signal

import pytest

from opperf.frameworks import get_backend
from opperf.operators.rules.profiles import SMALL


@pytest.fixture(scope="session")
def backend():
    return get_backend("mxnet")


@pytest.fixture(scope="session")
def registry(backend):
    return {op.name: op for op in backend.operators()}


@pytest.fixture(scope="session")
def small_profile():
    return SMALL


@pytest.fixture(autouse=True)
def stopping_signals_at_their_defaults():
    """Each test, and the processes it starts, begins with the stopping signals at their defaults, as
    a command typed at a terminal does. A suite run in the background (``nohup make test &``) starts
    with SIGINT and SIGHUP ignored, and opperf keeps a signal its process started ignoring ignored."""
    defaults = {
        signal.SIGINT: signal.default_int_handler,
        signal.SIGTERM: signal.SIG_DFL,
        signal.SIGHUP: signal.SIG_DFL,
    }
    previous = {number: signal.signal(number, handler) for number, handler in defaults.items()}
    yield
    for number, handler in previous.items():
        signal.signal(number, handler)
