"""PyTorch operators that cannot be benchmarked standalone, each with the specific reason, as data:
everywhere (``SKIP_REASONS``), or on one kind of device only (``DEVICE_SKIP_REASONS``)."""

from __future__ import annotations

from opperf.operators.info import OpInfo

_CELL_PARAMS = (
    "takes CellParamsBase objects (torch.classes.rnn, made by quantized::make_quantized_cell_params), "
    "not tensors; its Tensor[] overloads are no longer supported"
)
_MIOPEN = "a MIOpen kernel: it runs only on a ROCm build of PyTorch"
_STREAM = "takes a CUDA stream object"
_FUNCTIONALIZATION = "a copy for traced graphs with no kernel for the sparse tensors it takes"
_AUTOGRAD_ONLY = "autograd bookkeeping on a tensor that requires grad; it runs no tensor computation"
_FILE = "reads a file from disk; benchmarking file I/O is out of scope"

SKIP_REASONS: dict[str, str] = {
    "quantized_gru": _CELL_PARAMS,
    "quantized_lstm": _CELL_PARAMS,
    "miopen_batch_norm": _MIOPEN,
    "miopen_convolution": _MIOPEN,
    "miopen_convolution_add_relu": _MIOPEN,
    "miopen_convolution_relu": _MIOPEN,
    "miopen_convolution_transpose": _MIOPEN,
    "miopen_ctc_loss": _MIOPEN,
    "miopen_depthwise_convolution": _MIOPEN,
    "miopen_rnn": _MIOPEN,
    "indices_copy": _FUNCTIONALIZATION,
    "values_copy": _FUNCTIONALIZATION,
    "retain_grad": _AUTOGRAD_ONLY,
    "record_stream": _STREAM,
    "from_file": _FILE,
}

_CUDA_ONLY = "a cuDNN or CUDA-only kernel: it has no CPU implementation"
_CPU_ONLY = (
    "an MKL-DNN (oneDNN), FBGEMM or quantized-CPU kernel for CPU tensors: it has no GPU implementation "
    "(on an H100, fbgemm and choose_qparams_optimized killed their worker with SIGSEGV)"
)
_NO_CUDA_KERNEL = "PyTorch has no CUDA kernel for it (NotImplementedError for the CUDA backend)"
_SYNC_BATCH_NORM = "a SyncBatchNorm helper with CUDA kernels only: it has no CPU implementation"

# Skipped only on the device kind named: the operator runs elsewhere.
DEVICE_SKIP_REASONS: dict[str, dict[str, str]] = {
    "cpu": {
        "cudnn_affine_grid_generator": _CUDA_ONLY,
        "cudnn_batch_norm": _CUDA_ONLY,
        "cudnn_convolution": _CUDA_ONLY,
        "cudnn_convolution_add_relu": _CUDA_ONLY,
        "cudnn_convolution_relu": _CUDA_ONLY,
        "cudnn_convolution_transpose": _CUDA_ONLY,
        "cudnn_grid_sampler": _CUDA_ONLY,
        "batch_norm_elemt": _SYNC_BATCH_NORM,
        "batch_norm_gather_stats": _SYNC_BATCH_NORM,
        "batch_norm_gather_stats_with_counts": _SYNC_BATCH_NORM,
        "batch_norm_stats": _SYNC_BATCH_NORM,
        "cuda": "copies a tensor to a CUDA device; there is none on a CPU run",
        "pin_memory": "pins host memory for transfers to an accelerator; there is none on a CPU run",
    },
    "gpu": {
        **{
            name: _CPU_ONLY
            for name in (
                "mkldnn_adaptive_avg_pool2d",
                "mkldnn_convolution",
                "mkldnn_max_pool2d",
                "mkldnn_max_pool3d",
                "mkldnn_rnn_layer",
                "fbgemm_linear_fp16_weight",
                "fbgemm_linear_fp16_weight_fp32_activation",
                "fbgemm_linear_int8_weight",
                "fbgemm_linear_int8_weight_fp32_activation",
                "fbgemm_linear_quantize_weight",
                "fbgemm_pack_gemm_matrix_fp16",
                "fbgemm_pack_quantized_matrix",
                "choose_qparams_optimized",
                "quantized_gru_cell",
                "quantized_lstm_cell",
                "quantized_rnn_relu_cell",
                "quantized_rnn_tanh_cell",
            )
        },
        "histogram": _NO_CUDA_KERNEL,
        "histogramdd": _NO_CUDA_KERNEL,
    },
}


def skip_reason(op: OpInfo, device_kind: str) -> str | None:
    """Why ``op`` cannot be benchmarked on a device of ``device_kind``, or None."""
    return SKIP_REASONS.get(op.name) or DEVICE_SKIP_REASONS.get(device_kind, {}).get(op.name)
