"""Built-in Gluon models for ``opperf capture`` and ``opperf model``: random weights, no downloads.

ResNet-18 v1 and MobileNet 1.0 come from Gluon's model zoo (``pretrained=False``); the LSTM language
model and the transformer encoder block are written here. Each builder takes the input shape and
returns the initialised block and its example inputs.
"""

from __future__ import annotations

from opperf.sweep.models import BuiltInModel


def _zoo(name: str):
    def build(shape: tuple[int, ...]) -> tuple[object, tuple]:
        import mxnet as mx
        from mxnet.gluon.model_zoo import vision

        mx.random.seed(0)
        net = vision.get_model(name, pretrained=False)
        net.initialize()
        return net, (mx.nd.random.uniform(shape=shape),)

    return build


def _lstm(shape: tuple[int, ...]) -> tuple[object, tuple]:
    """A word-level language model: embedding, two LSTM layers, a decoder; the shape is (batch, tokens)."""
    import mxnet as mx
    from mxnet import gluon

    class LanguageModel(gluon.HybridBlock):
        def __init__(self, vocabulary: int = 1000, width: int = 128) -> None:
            super().__init__()
            with self.name_scope():
                self.embedding = gluon.nn.Embedding(vocabulary, width)
                self.lstm = gluon.rnn.LSTM(width, num_layers=2, layout="NTC", input_size=width)
                self.decoder = gluon.nn.Dense(vocabulary, flatten=False, in_units=width)

        def hybrid_forward(self, ops, tokens):
            return self.decoder(self.lstm(self.embedding(tokens)))

    mx.random.seed(0)
    net = LanguageModel()
    net.initialize()
    return net, (mx.nd.random.randint(0, 1000, shape=shape).astype("float32"),)


def _transformer(shape: tuple[int, ...]) -> tuple[object, tuple]:
    """One post-norm encoder block (self-attention, 4 heads, feed-forward 4x); the shape is (batch,
    sequence, model width)."""
    import mxnet as mx
    from mxnet import gluon

    batch, length, width = shape
    heads = 4

    class EncoderBlock(gluon.HybridBlock):
        def __init__(self) -> None:
            super().__init__()
            with self.name_scope():
                self.qkv = gluon.nn.Dense(3 * width, flatten=False, in_units=width)
                self.proj = gluon.nn.Dense(width, flatten=False, in_units=width)
                self.norm1 = gluon.nn.LayerNorm(in_channels=width)
                self.ffn1 = gluon.nn.Dense(4 * width, flatten=False, activation="relu", in_units=width)
                self.ffn2 = gluon.nn.Dense(width, flatten=False, in_units=4 * width)
                self.norm2 = gluon.nn.LayerNorm(in_channels=width)

        def hybrid_forward(self, ops, x):
            qkv = self.qkv(x).reshape((batch, length, 3, heads, -1)).transpose((2, 0, 3, 1, 4))
            qkv = qkv.reshape((3, batch * heads, length, -1))
            q, k, v = ops.split(qkv, num_outputs=3, axis=0, squeeze_axis=True)
            scores = ops.batch_dot(q, k, transpose_b=True) / float((width // heads) ** 0.5)
            attended = ops.batch_dot(ops.softmax(scores, axis=-1), v)
            attended = attended.reshape((batch, heads, length, -1)).transpose((0, 2, 1, 3))
            x = self.norm1(x + self.proj(attended.reshape((batch, length, width))))
            return self.norm2(x + self.ffn2(self.ffn1(x)))

    mx.random.seed(0)
    net = EncoderBlock()
    net.initialize()
    return net, (mx.nd.random.uniform(shape=shape),)


MODELS = {
    "resnet18_v1": BuiltInModel(
        "resnet18_v1", (1, 3, 224, 224), _zoo("resnet18_v1"), "Gluon model zoo ResNet-18 v1"
    ),
    "mobilenet1.0": BuiltInModel(
        "mobilenet1.0", (1, 3, 224, 224), _zoo("mobilenet1.0"), "Gluon model zoo MobileNet 1.0"
    ),
    "lstm": BuiltInModel("lstm", (1, 32), _lstm, "embedding, 2-layer LSTM, decoder; (batch, tokens)"),
    "transformer": BuiltInModel(
        "transformer",
        (1, 64, 256),
        _transformer,
        "self-attention encoder block, 4 heads; (batch, sequence, width)",
    ),
}
MODELS["resnet18"] = MODELS["resnet18_v1"]
