"""Where JAX's workers keep the programs XLA compiled: a folder the user names (JAX's own
``JAX_COMPILATION_CACHE_DIR``), in a part of it for the JAX build that runs, else the runner's own.

JAX's key for a program holds the program, the jaxlib version string, XLA's flags, the compile options
and the platform, not the build: two builds of one jaxlib version (a local XLA change against the
build it started from, which is what ``opperf ab`` compares) would read each other's programs from
one folder, and the new side would run what the base side compiled. So each build keeps its
programs in a subfolder named by its jaxlib version and a digest of the shared libraries of jaxlib
and its device plugins (names, sizes and modification times)."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator, Sequence

from opperf.utils.errors import OpperfError

USER_FOLDER = "JAX_COMPILATION_CACHE_DIR"
"""JAX's own setting naming a folder for compiled programs; where it is set, the workers keep theirs
there (``JaxBackend.keep_compiled``), in their build's part of it (``user_folder``)."""

USER_FOLDER_LIMIT = "JAX_COMPILATION_CACHE_MAX_SIZE"
"""JAX's own setting limiting that folder's bytes; where it is set, the workers keep to it."""


def user_folder() -> str | None:
    """The running JAX build's part of the folder the user names (as an absolute path), None where
    none is named; OpperfError where the named one is no folder opperf can write in (a file, a path
    under one, a read-only folder): JAX would keep nothing there, and say nothing."""
    root = os.environ.get(USER_FOLDER)
    if not root:
        return None
    root = os.path.abspath(root)
    existing = root
    while not os.path.exists(existing):  # the folder, or the part of its path that exists
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing) or not os.access(existing, os.W_OK | os.X_OK):
        raise OpperfError(
            f"{USER_FOLDER}={os.environ[USER_FOLDER]} is no folder opperf can keep compiled programs in "
            f"({existing} is {'read-only' if os.path.isdir(existing) else 'a file'}); name a writable "
            "folder, or unset it"
        )
    import jaxlib

    return build_folder(root, [os.path.dirname(jaxlib.__file__), *_plugin_folders()], jaxlib.__version__)


PLUGINS = ("jax_plugins", "jax_cuda", "jax_rocm")
"""How the packages holding JAX's device plugins begin (``jax_cuda12_plugin``, ``jax_plugins``): a
GPU's compiler lives in one, not in jaxlib."""


def _plugin_folders() -> list[str]:
    found: set[str] = set()
    for entry in sys.path:
        if not os.path.isdir(entry):
            continue
        with os.scandir(entry) as entries:
            found.update(
                e.path for e in entries if e.is_dir() and e.name.startswith(PLUGINS) and "." not in e.name
            )
    return sorted(found)


def build_folder(root: str, packages: Sequence[str], version: str) -> str:
    """``root``'s subfolder for the jaxlib (and device plugins) installed in ``packages``: its version
    and a digest of their shared libraries (path, size, modification time), which a rebuild changes."""
    libraries = sorted(line for package in packages for line in _libraries(package))
    digest = hashlib.sha256("\n".join(libraries).encode()).hexdigest()[:12]
    return os.path.join(root, f"jaxlib-{version}-{digest}")


def _libraries(package: str) -> Iterator[str]:
    """Each shared library under ``package``: its path within it, size and modification time."""
    for folder, _, names in os.walk(package):
        for name in names:
            if name.endswith((".so", ".pyd", ".dylib")):
                path = os.path.join(folder, name)
                status = os.stat(path)
                yield f"{os.path.relpath(path, package)}:{status.st_size}:{status.st_mtime_ns}"
