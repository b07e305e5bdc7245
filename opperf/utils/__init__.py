"""Leaf helpers with no opperf dependency above them: errors, statistics, files, signals, load,
CPU affinity, cgroups, caches, GPU state, words and table cells."""
