"""History: result files' rows over time in an embedded SQLite store, and step detection on them."""
