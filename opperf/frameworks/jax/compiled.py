"""Where JAX's workers keep the programs XLA compiled: a folder the user names (JAX's own
``JAX_COMPILATION_CACHE_DIR``), in a part of it for the JAX build that runs, else the runner's own.

JAX's key for a program holds the program, the jaxlib version string, XLA's flags, the compile options
and the platform, not the build: two builds of one jaxlib version (a local XLA change against the
build it started from, which is what ``opperf ab`` compares) would read each other's programs from
one folder, and the new side would run what the base side compiled. So each build keeps its
programs in a subfolder named by its jaxlib version and a digest of its shared libraries' names,
sizes and modification times."""

from __future__ import annotations

import hashlib
import os

USER_FOLDER = "JAX_COMPILATION_CACHE_DIR"
"""JAX's own setting naming a folder for compiled programs; where it is set, the workers keep theirs
there (``JaxBackend.keep_compiled``), in their build's part of it (``user_folder``)."""

USER_FOLDER_LIMIT = "JAX_COMPILATION_CACHE_MAX_SIZE"
"""JAX's own setting limiting that folder's bytes; where it is set, the workers keep to it."""


def user_folder() -> str | None:
    """The running JAX build's part of the folder the user names, None where none is named."""
    root = os.environ.get(USER_FOLDER)
    if not root:
        return None
    import jaxlib

    return build_folder(root, os.path.dirname(jaxlib.__file__), jaxlib.__version__)


def build_folder(root: str, package: str, version: str) -> str:
    """``root``'s subfolder for the jaxlib installed in ``package``: its version and a digest of its
    shared libraries (name, size, modification time), which a rebuild changes."""
    with os.scandir(package) as entries:
        libraries = sorted(
            f"{entry.name}:{entry.stat().st_size}:{entry.stat().st_mtime_ns}"
            for entry in entries
            if entry.is_file() and entry.name.endswith((".so", ".pyd", ".dylib"))
        )
    digest = hashlib.sha256("\n".join(libraries).encode()).hexdigest()[:12]
    return os.path.join(root, f"jaxlib-{version}-{digest}")
