"""Built-in JAX models for ``opperf capture`` and ``opperf model``, written here in ``jax.numpy`` and
``jax.lax`` (no Flax or Haiku): random weights, no downloads. Each builder takes the input shape and
returns the model, a function of (parameters, inputs), and its example arguments."""

from __future__ import annotations

from typing import Any

from opperf.sweep.models import BuiltInModel

SEED = 0
MLP_WIDTHS = (512, 512, 10)
RESNET_STAGES = ((16, 1), (32, 2), (64, 2))
"""Each stage's channels and first stride; one basic block a stage."""
NORM_EPSILON = 1e-5


def _mlp(shape: tuple[int, ...]) -> tuple[object, tuple]:
    """Dense layers with GELU between them and a log-softmax at the end: (batch, features)."""
    import jax
    import jax.numpy as jnp

    keys = jax.random.split(jax.random.PRNGKey(SEED), len(MLP_WIDTHS))
    widths = (shape[-1], *MLP_WIDTHS)
    params = [
        {"w": jax.random.normal(key, (fan_in, fan_out)) / jnp.sqrt(fan_in), "b": jnp.zeros(fan_out)}
        for key, fan_in, fan_out in zip(keys, widths, widths[1:], strict=False)
    ]

    def mlp(params: list[dict[str, Any]], x: Any) -> Any:
        for layer in params[:-1]:
            x = jax.nn.gelu(x @ layer["w"] + layer["b"])
        return jax.nn.log_softmax(x @ params[-1]["w"] + params[-1]["b"])

    return mlp, (params, jax.random.normal(jax.random.PRNGKey(SEED + 1), shape))


def _conv(x: Any, w: Any, stride: int) -> Any:
    import jax

    return jax.lax.conv_general_dilated(
        x, w, (stride, stride), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )


def _norm(x: Any, scale_shift: dict[str, Any]) -> Any:
    """Batch normalisation over the batch and spatial axes, with a learned scale and shift."""
    import jax.numpy as jnp

    mean = x.mean(axis=(0, 1, 2))
    variance = x.var(axis=(0, 1, 2))
    return (x - mean) / jnp.sqrt(variance + NORM_EPSILON) * scale_shift["scale"] + scale_shift["shift"]


def _resnet(shape: tuple[int, ...]) -> tuple[object, tuple]:
    """A small ResNet: a 3x3 stem, three stages of one basic block (two 3x3 convolutions, batch
    normalisation, ReLU, a 1x1 projection where the shape changes), global average pooling and a
    dense classifier: (batch, height, width, channels), NHWC as XLA prefers."""
    import jax
    import jax.numpy as jnp

    key = iter(jax.random.split(jax.random.PRNGKey(SEED), 32))

    def weight(*dims: int) -> Any:
        fan_in = 1
        for d in dims[:-1]:
            fan_in *= d
        return jax.random.normal(next(key), dims) * jnp.sqrt(2.0 / fan_in)

    def norm(channels: int) -> dict[str, Any]:
        return {"scale": jnp.ones(channels), "shift": jnp.zeros(channels)}

    channels = RESNET_STAGES[0][0]
    params: dict[str, Any] = {
        "stem": weight(3, 3, shape[-1], channels),
        "stem_norm": norm(channels),
        "blocks": [],
    }
    for width, stride in RESNET_STAGES:
        block = {"conv1": weight(3, 3, channels, width), "norm1": norm(width),
                 "conv2": weight(3, 3, width, width), "norm2": norm(width)}  # fmt: skip
        if stride != 1 or width != channels:
            block["project"] = weight(1, 1, channels, width)
        params["blocks"].append(block)
        channels = width
    params["head"] = {"w": weight(channels, 10), "b": jnp.zeros(10)}

    def resnet(params: dict[str, Any], x: Any) -> Any:
        x = jax.nn.relu(_norm(_conv(x, params["stem"], 1), params["stem_norm"]))
        for block, (_, stride) in zip(params["blocks"], RESNET_STAGES, strict=True):
            out = jax.nn.relu(_norm(_conv(x, block["conv1"], stride), block["norm1"]))
            out = _norm(_conv(out, block["conv2"], 1), block["norm2"])
            shortcut = _conv(x, block["project"], stride) if "project" in block else x
            x = jax.nn.relu(out + shortcut)
        pooled = x.mean(axis=(1, 2))
        return pooled @ params["head"]["w"] + params["head"]["b"]

    return resnet, (params, jax.random.normal(jax.random.PRNGKey(SEED + 1), shape))


MODELS = {
    "mlp": BuiltInModel("mlp", (32, 784), _mlp, "dense 784-512-512-10, GELU, log-softmax; (batch, features)"),
    "resnet": BuiltInModel(
        "resnet",
        (8, 32, 32, 3),
        _resnet,
        "a small ResNet: 3x3 stem, three basic blocks (16, 32, 64 channels); "
        "(batch, height, width, channels)",
    ),
}
"""The built-in JAX models by name."""
