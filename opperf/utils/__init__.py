"""Framework-neutral building blocks: operator records, results, statistics, timing, environment."""
