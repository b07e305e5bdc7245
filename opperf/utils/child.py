"""Child interpreters that run a module of this opperf package, and nothing of the folder they start in.

``python -m`` (and ``python -c``) put the working directory first on the module path: a ``ctypes.py``
or a ``numpy/`` in the folder opperf runs in would be imported by the child, and result files, configs
files and downloads live in such folders. A child started with ``opperf_command`` takes the working
directory off its path before it imports anything, leaves the user's site-packages out (``-s``), and
loads the ``opperf`` package from the folder the parent's own came from (an absolute path: whatever
the interpreter, the child runs the parent's code). The kernel is asked to kill the child when the
parent dies, and it exits at once if the parent died already.
"""

from __future__ import annotations

import os
import sys

_BOOTSTRAP = (
    "import sys\n"
    "if sys.path and sys.path[0] == '':\n"
    "    del sys.path[0]\n"
    "import ctypes, importlib.util, os, runpy\n"
    "try:\n"
    "    ctypes.CDLL(None).prctl(1, 9)\n"
    "except (OSError, AttributeError):\n"
    "    pass\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    sys.stderr.write('RuntimeError: not a child of the opperf process that started it (an "
    "interpreter that is a wrapper script must exec Python, not run it)\\n')\n"
    "    os._exit(1)\n"
    "package = importlib.util.spec_from_file_location(\n"
    "    'opperf', os.path.join(sys.argv[2], '__init__.py'), submodule_search_locations=[sys.argv[2]]\n"
    ")\n"
    "sys.modules['opperf'] = importlib.util.module_from_spec(package)\n"
    "package.loader.exec_module(sys.modules['opperf'])\n"
    "sys.argv = [sys.argv[3], *sys.argv[4:]]\n"
    "runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)\n"
)
"""The child's first code: argv[1] the parent's pid, argv[2] the package folder, argv[3] the module."""

PACKAGE_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""The folder of this ``opperf`` package: what every child loads, whatever its working directory."""


def opperf_command(module: str, *arguments: str, python: str = sys.executable) -> list[str]:
    """The command that runs ``module`` (``opperf.measure.worker``) with ``arguments`` as ``__main__`` in a
    child of this process, in interpreter ``python``, isolated from its working directory."""
    return [python, "-s", "-c", _BOOTSTRAP, str(os.getpid()), PACKAGE_FOLDER, module, *arguments]
