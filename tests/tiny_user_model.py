"""A user's own model for ``opperf capture --model tests.tiny_user_model:tiny``: a two-layer MLP."""

from __future__ import annotations


def tiny():
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    return model.eval(), (torch.rand(3, 8),)
