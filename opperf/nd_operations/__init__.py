"""Category runners. Categories are data (``opperf.frameworks.<name>.categories``); each module here
exposes the upstream opperf function names as thin wrappers of ``runner.run_categories``."""
