"""Remembered draws (opperf.utils.draws): every configuration gets exactly the inputs, and its generator
exactly the state, it would have had without the cache; with real numpy, MXNet and PyTorch."""

from __future__ import annotations

import numpy as np

from opperf.results.measurement import TensorSpec

# Configurations as a sweep makes them: each seeds its generator afresh and draws its tensors in turn;
# most begin with the same (8, 16) draw, one draws in another order, one draws a sparse and an
# integral tensor.
SQUARE = TensorSpec((8, 16))
CONFIGURATIONS = (
    (SQUARE, TensorSpec((16,))),
    (SQUARE, TensorSpec((8, 16), low=-1.0)),
    (TensorSpec((16,)), SQUARE),
    (SQUARE, TensorSpec((16,))),
    (
        SQUARE,
        TensorSpec((4, 4), integral=True, low=0, high=4),
        TensorSpec((8, 16), storage="csr", density=0.2),
    ),
)


def _mxnet_draws(draws):
    from opperf.frameworks.mxnet.arrays import ND_FRONTEND, make_array

    for specs in CONFIGURATIONS:
        rng = np.random.default_rng(7)
        arrays = [make_array(s, "float32", None, ND_FRONTEND, rng, draws).asnumpy() for s in specs]
        yield arrays, rng.uniform()  # what the generator draws next: its state after the inputs


def _torch_draws(draws):
    import torch

    from opperf.frameworks.torch.tensors import make_tensor

    for specs in CONFIGURATIONS[:4]:
        generator = torch.Generator().manual_seed(7)
        tensors = [make_tensor(s, "float32", torch.device("cpu"), generator, draws) for s in specs]
        yield tensors, torch.rand(1, generator=generator).item()


def _same(first, second) -> None:
    for (arrays, after), (cached, cached_after) in zip(first, second, strict=True):
        assert after == cached_after
        for array, kept in zip(arrays, cached, strict=True):
            assert np.array_equal(np.asarray(array), np.asarray(kept))


def test_mxnet_inputs_are_the_same_with_and_without_the_cache():
    from opperf.frameworks.mxnet.arrays import host_draws

    draws = host_draws()
    _same(list(_mxnet_draws(None)), list(_mxnet_draws(draws)))
    # the (8, 16) draw from a fresh generator in three later configurations, and the fourth's second
    assert (draws.hits, draws.misses) == (4, 7)


def test_torch_inputs_are_the_same_with_and_without_the_cache_and_changing_one_leaves_the_kept_values():
    from opperf.frameworks.torch.tensors import host_draws

    draws = host_draws()
    plain = [([t.clone() for t in tensors], after) for tensors, after in _torch_draws(None)]
    cached = []
    for tensors, after in _torch_draws(draws):
        cached.append(([t.clone() for t in tensors], after))
        tensors[0].add_(100.0)  # an in-place operator changes its input: the kept draw must not change
    _same(plain, cached)
    assert (draws.hits, draws.misses) == (3, 5)


def test_least_recently_used_draws_go_once_the_capacity_is_exceeded():
    from opperf.frameworks.mxnet.arrays import ND_FRONTEND, NUMPY_STATE, make_array
    from opperf.utils.draws import DrawCache

    one_tensor = SQUARE.size * 4
    draws = DrawCache(NUMPY_STATE, size=lambda v: v.nbytes, copy=lambda v: v, capacity_bytes=one_tensor)
    for low in (0.1, 0.2, 0.1):  # the second draw pushes the first out: the third draws again
        make_array(
            TensorSpec((8, 16), low=low), "float32", None, ND_FRONTEND, np.random.default_rng(1), draws
        )
    assert (draws.hits, draws.misses, draws.kept_bytes) == (0, 3, one_tensor)
