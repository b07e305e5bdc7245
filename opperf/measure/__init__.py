"""Measuring one configuration: the harness and its samplers, stages, timers and memory (what a
framework implements against), the roofline applied to a measurement, and the drivers that run
measurements in worker processes (``benchmark``, ``isolation``, ``worker``, ``threads``)."""
