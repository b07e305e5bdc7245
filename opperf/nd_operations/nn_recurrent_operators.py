"""Fused recurrent layers (RNN: rnn_relu, rnn_tanh, lstm, gru)."""

from opperf.compat.runner import category_runner

run_rnn_operators_benchmarks = category_runner("rnn")
