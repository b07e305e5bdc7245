"""Writing files so that a reader, or a kill at any moment, never leaves a half-written one."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from opperf.utils.errors import OpperfError


class UnwritableError(OpperfError):
    """A file that cannot be written; ``reason`` is the system's word for why."""

    def __init__(self, path: str | Path, reason: str) -> None:
        super().__init__(f"cannot write {path}: {reason}")
        self.reason = reason


def write_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a synced temporary file in the same folder renamed over it.

    Raises UnwritableError when ``path`` is no regular file (renaming over a device or pipe would replace
    it) or the file cannot be written (a full disk: the temporary file is removed, ``path`` untouched).
    """
    if os.path.exists(path) and not os.path.isfile(path):
        raise UnwritableError(path, "it is no regular file (a device, pipe or socket); write to a file")
    folder = Path(path).resolve().parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".opperf-", suffix=".tmp")
    except OSError as error:
        raise UnwritableError(path, error.strerror or str(error)) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as output:
            output.write(text)
            output.flush()
            os.fsync(output.fileno())
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes files private; reports are not
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise UnwritableError(path, error.strerror or str(error)) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def open_to_append(path: str) -> BinaryIO:
    """``path`` opened unbuffered to append (made where absent), where it is a file of its own: a
    symbolic link there (another user's, in a shared folder) would have a job empty and write the file
    it names, and a FIFO would block the open forever. UnwritableError otherwise, naming what it is."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        descriptor = os.open(path, flags, 0o666)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnwritableError(
                path, "it is a symbolic link; remove it, or choose another --output-file"
            ) from None
        if error.errno == errno.ENXIO:  # a FIFO no one reads
            raise UnwritableError(path, "it is a FIFO; remove it, or choose another --output-file") from None
        raise UnwritableError(path, error.strerror or str(error)) from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise UnwritableError(path, "it is no regular file; remove it, or choose another --output-file")
    os.set_blocking(descriptor, True)
    return os.fdopen(descriptor, "ab", buffering=0)


@contextlib.contextmanager
def claimed(path: str) -> Iterator[None]:
    """Hold ``path`` for this process while inside: an exclusive lock on ``PATH.lock``, removed on
    the way out. A second job naming the same output is refused (OpperfError) instead of both
    reporting success and one's results vanishing; a lock left by a killed job is released with it."""
    lock_path = f"{path}.lock"
    handle = open_to_append(lock_path)  # held until the end of the context
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise OpperfError(
            f"another job is writing {path} (it holds {lock_path}); wait for it to finish, or choose "
            "another --output-file"
        ) from None
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock_path)
        handle.close()


def folder_beside(path: Path, label: str) -> Path:
    """A new, empty folder in ``path``'s folder, named after it and ``label``, with the permissions
    a new folder gets (``mkdtemp`` makes it private); UnwritableError when it cannot be made."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}-{label}-"))
        folder.chmod(0o777 & ~_umask())
    except OSError as error:
        raise UnwritableError(path, error.strerror or str(error)) from None
    return folder


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
