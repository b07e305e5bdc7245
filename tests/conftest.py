"""Shared fixtures: the real MXNet backend and small, fast run settings."""

from __future__ import annotations

import pytest

from opperf.frameworks import get_backend
from opperf.rules.profiles import SMALL


@pytest.fixture(scope="session")
def backend():
    return get_backend("mxnet")


@pytest.fixture(scope="session")
def registry(backend):
    return {op.name: op for op in backend.operators()}


@pytest.fixture(scope="session")
def small_profile():
    return SMALL
