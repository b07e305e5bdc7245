"""The upstream MXNet opperf API (``run_performance_test``, ``run_benchmark_operator``, the
``nd_operations`` runners) on top of opperf."""
