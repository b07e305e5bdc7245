"""Test-only: a known slowdown, or a crash that happens once, injected into opperf's workers from
outside opperf, for the detection benchmarks (``benchmarks/regression_detection.py``) and the A/B tests
to find.

A worker whose environment puts this folder on ``PYTHONPATH`` and sets ``OPPERF_TEST_SLOWDOWN`` to
``OP[,OP...]:FACTOR`` (``ab --new-env PYTHONPATH=benchmarks/slowdown --new-env
OPPERF_TEST_SLOWDOWN=exp:1.10``) multiplies those operators' samples by FACTOR after timing: Python
imports this module at start-up (``site``), and it wraps ``opperf.measure.harness.measure_prepared``,
where every measurement is made, as soon as that module is loaded. Nothing in opperf knows of it.

``OPPERF_TEST_CRASH_ONCE`` set to ``OP:MARKER`` aborts the worker (SIGABRT, as a segfaulting
operator's does) the first time it measures OP, unless the file MARKER exists, which it creates
first: the next worker measures OP, as a flaky operator's would.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import os
import sys
from dataclasses import replace

VARIABLE = "OPPERF_TEST_SLOWDOWN"
CRASH_ONCE = "OPPERF_TEST_CRASH_ONCE"
HARNESS = "opperf.measure.harness"


def _scaled(samples, factor: float):
    return tuple(sample * factor for sample in samples) if samples else samples


def _slowed(measure_prepared, names: frozenset[str], factor: float):
    @functools.wraps(measure_prepared)
    def measured(*arguments, **keywords):
        measurement = measure_prepared(*arguments, **keywords)
        if measurement.spec.op not in names:
            return measurement
        return replace(
            measurement,
            forward=_scaled(measurement.forward, factor),
            backward=_scaled(measurement.backward, factor),
        )

    return measured


def _crashing_once(measure_prepared, name: str, marker: str):
    @functools.wraps(measure_prepared)
    def measured(session, spec, *arguments, **keywords):
        if spec.op == name and not os.path.exists(marker):
            open(marker, "w").close()
            os.abort()
        return measure_prepared(session, spec, *arguments, **keywords)

    return measured


class _AfterHarness(importlib.abc.MetaPathFinder):
    """Finds the harness as the path finder would, and wraps its measuring once it has run."""

    def __init__(self, wrap) -> None:
        self._wrap = wrap

    def find_spec(self, name, path, target=None):
        if name != HARNESS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module) -> None:
            execute(module)
            module.measure_prepared = self._wrap(module.measure_prepared)

        spec.loader.exec_module = exec_module
        return spec


_wraps = []
_setting = os.environ.get(VARIABLE)
if _setting:
    _names, _, _factor = _setting.rpartition(":")
    _chosen = frozenset(_names.split(","))
    _wraps.append(lambda found: _slowed(found, _chosen, float(_factor)))
_crash = os.environ.get(CRASH_ONCE)
if _crash:
    _name, _, _marker = _crash.partition(":")
    _wraps.append(lambda found: _crashing_once(found, _name, _marker))
if _wraps:
    sys.meta_path.insert(0, _AfterHarness(lambda found: functools.reduce(lambda f, w: w(f), _wraps, found)))
