"""Binary operators: broadcasting, element-wise, and tensor-scalar."""

from opperf.compat.runner import category_runner

run_mx_binary_broadcast_operators_benchmarks = category_runner("binary_broadcast")
run_mx_binary_element_wise_operators_benchmarks = category_runner("binary_elemwise")
run_mx_binary_misc_operators_benchmarks = category_runner("scalar")
