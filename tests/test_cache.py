"""Cold-cache rotation: how many input sets, and a real cold measurement."""

import mxnet as mx
import pytest

from opperf.measure.benchmark import RunOptions, benchmark
from opperf.results.measurement import Status
from opperf.utils.cache import MAX_INPUT_SETS, input_sets, last_level_cache_bytes
from opperf.utils.errors import OpperfError

MIB = 2**20


def test_hot_uses_one_input_set():
    assert input_sets("hot", 8 * MIB, 32 * MIB) == 1


def test_cold_rotates_sets_totalling_twice_the_cache():
    assert input_sets("cold", 8 * MIB, 32 * MIB) == 8
    assert input_sets("cold", 100 * MIB, 32 * MIB) == 1  # one set already exceeds the cache
    assert input_sets("cold", 16, 32 * MIB) == MAX_INPUT_SETS
    assert input_sets("cold", 8 * MIB, None) == 1  # cache size unknown


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="cache mode"):
        input_sets("lukewarm", 1, 1)
    with pytest.raises(OpperfError, match="cache mode"):
        benchmark(mx.nd.exp, [{"data": (4, 4)}], RunOptions(cache="lukewarm"))


def test_this_machine_reports_a_cache_size():
    size = last_level_cache_bytes()
    assert size is None or size >= 256 * 1024


def test_cold_measurement_records_its_mode():
    options = RunOptions(cache="cold", warmup=1, runs=5)
    (m,) = benchmark(mx.nd.add, [{"lhs": (256, 256), "rhs": (256, 256)}], options)
    assert m.status is Status.OK and m.spec.options.cache == "cold"
    assert len(m.forward) == 5 and len(m.backward) == 5
