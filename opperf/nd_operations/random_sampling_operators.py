"""Random generators and samplers."""

from opperf.compat.runner import category_runner

run_mx_random_sampling_operators_benchmarks = category_runner("random_sampling")
