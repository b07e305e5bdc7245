"""Trimming the heap between configurations once the process has grown enough (opperf.measure.memory)."""

from __future__ import annotations

from opperf.measure.memory import HeapTrimmer, resident_bytes


def _half_freed(megabytes: int) -> list[bytearray]:
    """About ``megabytes`` allocated and half of it freed again: 64 KiB blocks (below glibc's mmap
    threshold) with every second one freed, so the holes stay on the heap until it is trimmed."""
    blocks = [bytearray(64 * 1024) for _ in range(megabytes * 16)]
    del blocks[::2]
    return blocks


def test_the_heap_is_trimmed_only_once_the_process_grew_more_than_allowed():
    trim = HeapTrimmer(allowed_growth=64 * 2**20)
    assert trim()  # the first call trims: nothing is known yet
    small = _half_freed(32)
    assert not trim()  # grew by about 32 MiB: kept for reuse
    large = _half_freed(160)
    grown = resident_bytes()
    assert trim()
    assert resident_bytes() < grown - 48 * 2**20  # the freed half of the large blocks went back
    assert not trim()
    del small, large
