"""Reading the files opperf is given (results, configs, journals, DLOP-Bench files): regular files of a
size it can hold, whatever the path names.

A path from a user or a script can name a FIFO (a read blocks until a writer comes: forever), a device
(``/dev/zero`` fills memory until the kernel kills the process), a folder, or a file far larger than
any opperf writes. Each is refused before a byte is read, with the system's kind of error (``OSError``,
its ``strerror`` saying why), so the callers' messages for an unreadable file hold for these too.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

MOST_BYTES = 1 << 30
"""The largest file opperf reads: 1 GiB, where a full sweep's results file is tens of MB and reading
JSON takes several times its size in memory."""

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_bytes(path: str | Path) -> bytes:
    """The bytes of the file at ``path``; OSError where it is missing or unreadable, no regular file,
    or larger than ``MOST_BYTES``. Opened without blocking, so a FIFO is found, not waited on."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            kind = next((name for test, name in _KINDS if test(status.st_mode)), "not a file")
            raise OSError(errno.EINVAL, f"it is no regular file ({kind})", str(path))
        if status.st_size > MOST_BYTES:
            raise OSError(
                errno.EFBIG,
                f"it holds {status.st_size:,} bytes, more than opperf reads ({MOST_BYTES:,})",
                str(path),
            )
        return handle.read(MOST_BYTES + 1)


def read_text(path: str | Path) -> str:
    """``read_bytes`` as UTF-8 text; UnicodeDecodeError where it is not."""
    return read_bytes(path).decode("utf-8")
