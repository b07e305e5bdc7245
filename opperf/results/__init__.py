"""The files opperf writes and reads: the spec and measurement types, the options a record was
measured with, the results document with its schema and environment, the typed views every reader
uses (``rows``, ``load``), coverage, and the configs files that captures write and sweeps replay."""
