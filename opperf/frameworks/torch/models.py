"""Built-in PyTorch models for ``opperf capture`` and ``opperf model``: random weights, no downloads.

torchvision's wheel here is a CUDA build that does not import against the CPU torch, so ResNet-18 is
defined here (torchvision's architecture: basic blocks, [2, 2, 2, 2]); the transformer encoder and
the LSTM language model come from torch core. Each builder takes the input shape and returns the
model in eval mode and its example inputs.
"""

from __future__ import annotations

from opperf.sweep.models import BuiltInModel


def _resnet18(shape: tuple[int, ...]) -> tuple[object, tuple]:
    import torch
    from torch import nn

    class BasicBlock(nn.Module):
        def __init__(self, inplanes: int, planes: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = None
            if stride != 1 or inplanes != planes:
                self.downsample = nn.Sequential(
                    nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes)
                )

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + identity)

    class ResNet18(nn.Module):
        def __init__(self, classes: int = 1000) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            layers, inplanes = [], 64
            for planes, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                layers += [BasicBlock(inplanes, planes, stride), BasicBlock(planes, planes, 1)]
                inplanes = planes
            self.layers = nn.Sequential(*layers)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512, classes)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.avgpool(self.layers(x))
            return self.fc(torch.flatten(x, 1))

    torch.manual_seed(0)
    return ResNet18().eval(), (torch.rand(shape),)


def _transformer(shape: tuple[int, ...]) -> tuple[object, tuple]:
    """One encoder layer; the shape is (batch, sequence, model width), 4 heads, feed-forward 4x."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    width = shape[2]
    layer = nn.TransformerEncoderLayer(width, 4, 4 * width, dropout=0.1, batch_first=True)
    return layer.eval(), (torch.rand(shape),)


def _lstm(shape: tuple[int, ...]) -> tuple[object, tuple]:
    """A word-level language model: embedding, two LSTM layers, a decoder; the shape is (batch, tokens)."""
    import torch
    from torch import nn

    class LanguageModel(nn.Module):
        def __init__(self, vocabulary: int = 1000, width: int = 128) -> None:
            super().__init__()
            self.embedding = nn.Embedding(vocabulary, width)
            self.lstm = nn.LSTM(width, width, 2, batch_first=True)
            self.decoder = nn.Linear(width, vocabulary)

        def forward(self, tokens):
            hidden, _ = self.lstm(self.embedding(tokens))
            return self.decoder(hidden)

    torch.manual_seed(0)
    return LanguageModel().eval(), (torch.randint(0, 1000, shape),)


MODELS = {
    "resnet18": BuiltInModel(
        "resnet18", (1, 3, 224, 224), _resnet18, "ResNet-18 (torchvision's architecture)"
    ),
    "transformer": BuiltInModel(
        "transformer",
        (1, 64, 256),
        _transformer,
        "nn.TransformerEncoderLayer, 4 heads; (batch, sequence, width)",
    ),
    "lstm": BuiltInModel("lstm", (1, 32), _lstm, "embedding, 2-layer LSTM, decoder; (batch, tokens)"),
}
