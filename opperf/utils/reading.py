"""Reading the files opperf is given (results, configs, journals, DLOP-Bench files): regular files of a
size it can hold, whatever the path names.

A path from a user or a script can name a FIFO (opening one waits for a writer: forever, where none
comes), a device (``/dev/zero`` fills memory until the kernel kills the process), a folder, or a file
far larger than any opperf writes. A device, folder or socket is refused before a byte is read, a
file or pipe beyond ``MOST_BYTES`` once that much is seen, with the system's kind of error
(``OSError``, its ``strerror`` saying why), so the callers' messages for an unreadable file hold for
these too. A pipe is opened without waiting for its writer and read to its end (a shell's
``<(gunzip -c results.json.gz)``).
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
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_bytes(path: str | Path) -> bytes:
    """The bytes of the file at ``path``; OSError where it is missing or unreadable, a folder, a
    device or a socket, or larger than ``MOST_BYTES``. A pipe (``<(gunzip -c results.json.gz)``) is
    read to its end, up to ``MOST_BYTES``; opened without waiting for a writer, one with none reads as
    empty, never as a wait."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(descriptor)
        fifo = stat.S_ISFIFO(status.st_mode)
        if not (stat.S_ISREG(status.st_mode) or fifo):
            kind = next((name for test, name in _KINDS if test(status.st_mode)), "not a file")
            raise OSError(errno.EINVAL, f"it is no regular file ({kind})", str(path))
        if fifo:
            os.set_blocking(descriptor, True)  # a writer's data is waited for; none at all reads as the end
        elif status.st_size > MOST_BYTES:
            raise _too_large(status.st_size, path)
        content = handle.read(MOST_BYTES + 1)
        if len(content) > MOST_BYTES:
            raise _too_large(len(content), path)
        return content


def _too_large(size: int, path: str | Path) -> OSError:
    return OSError(
        errno.EFBIG, f"it holds {size:,} bytes or more, more than opperf reads ({MOST_BYTES:,})", str(path)
    )


def read_text(path: str | Path) -> str:
    """``read_bytes`` as UTF-8 text; UnicodeDecodeError where it is not."""
    return read_bytes(path).decode("utf-8")
