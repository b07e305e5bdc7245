"""Category runners. Categories are data (``categories.CATEGORIES``); each module here exposes the
upstream opperf function names as thin wrappers of ``runner.run_categories``."""
