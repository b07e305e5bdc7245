"""Random generators and samplers."""

from opperf.nd_operations.runner import category_runner

run_mx_random_sampling_operators_benchmarks = category_runner("random_sampling")
