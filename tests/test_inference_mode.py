"""Forward-only figures are inference figures, in both frameworks: an observer standing in for an
operator sees the autograd state of every pass opperf times. Forward-only: MXNet not recording (and
not in training mode), PyTorch without grad under ``torch.inference_mode``; with backward (or
``mode="training"``), the measured passes record."""

from __future__ import annotations

import mxnet as mx
import torch

from opperf import RunOptions, benchmark

QUICK = {"runs": 2, "warmup": 0, "profiler": "python"}


def _mxnet_observer(seen: list):
    def exp(data):
        seen.append((mx.autograd.is_recording(), mx.autograd.is_training()))
        return mx.nd.exp(data)

    exp.__name__, exp.__module__ = "exp", "mxnet.ndarray"
    return exp


def _torch_observer(seen: list):
    def exp(input):  # torch.exp's argument name, which opperf fills by name
        seen.append((torch.is_grad_enabled(), torch.is_inference_mode_enabled(), input.requires_grad))
        return torch.exp(input)

    exp.__name__, exp.__module__ = "exp", "torch"
    return exp


def test_mxnet_forward_only_passes_do_not_record():
    seen: list = []
    [m] = benchmark(_mxnet_observer(seen), [{"data": (8, 8)}], RunOptions(run_backward=False, **QUICK))
    assert m.spec.options.mode == "inference" and m.status.value == "ok"
    assert seen and set(seen) == {(False, False)}


def test_mxnet_passes_with_backward_record_in_training_mode():
    seen: list = []
    [m] = benchmark(_mxnet_observer(seen), [{"data": (8, 8)}], RunOptions(run_backward=True, **QUICK))
    assert m.spec.options.mode == "training"
    assert (True, True) in seen and set(seen) <= {(True, True), (False, False)}


def test_mxnet_forward_only_in_training_mode_trains_without_recording():
    # mode="training" without backward: operators see is_train (Dropout drops, BatchNorm takes batch
    # statistics, MKL-DNN writes its workspace), and no graph is recorded that nothing would use.
    seen: list = []
    options = RunOptions(run_backward=False, mode="training", **QUICK)
    [m] = benchmark(_mxnet_observer(seen), [{"data": (8, 8)}], options)
    assert m.spec.options.mode == "training" and set(seen) == {(False, True)}


def test_torch_forward_only_passes_run_under_inference_mode():
    seen: list = []
    options = RunOptions(framework="torch", run_backward=False, **QUICK)
    [m] = benchmark(_torch_observer(seen), [{"input": (8, 8)}], options)
    assert m.spec.options.mode == "inference" and m.status.value == "ok"
    assert not any(grad for grad, _, _ in seen)  # nothing records, probes included
    assert seen.count((False, True, False)) >= 2  # every measured pass under inference_mode


def test_torch_passes_with_backward_record_on_differentiated_inputs():
    seen: list = []
    options = RunOptions(framework="torch", run_backward=True, **QUICK)
    [m] = benchmark(_torch_observer(seen), [{"input": (8, 8)}], options)
    assert m.spec.options.mode == "training"
    timed = [state for state in seen if state[2]]  # passes on inputs a backward differentiates
    assert len(timed) >= 2 and all(grad and not inference for grad, inference, _ in timed)
