"""The PyTorch backend: the aten registry, public entry points, inputs, and ``torch.profiler`` timing."""
