"""How ``opperf compare`` calls an operator of the first namespace (``mx.nd``) in ``mx.np``, where
it lives in ``mx.npx`` or under another name; any other operator is called by its name. Imports
nothing of MXNet.
"""

from __future__ import annotations

from collections.abc import Mapping

from opperf.operators.counterparts import Counterpart

DEFAULT_RENAMES: Mapping[str, str] = {}
"""The renames of an operator called by its own name: none, MXNet's namespaces share them."""

COUNTERPARTS: Mapping[str, Counterpart] = {
    "broadcast_add": Counterpart("mx.np", "add"),
    "elemwise_add": Counterpart("mx.np", "add"),
    "broadcast_mul": Counterpart("mx.np", "multiply"),
    "batch_dot": Counterpart("mx.npx", "batch_dot"),
    "softmax": Counterpart("mx.npx", "softmax"),
    "relu": Counterpart("mx.npx", "relu"),
    "sigmoid": Counterpart("mx.npx", "sigmoid"),
    "FullyConnected": Counterpart("mx.npx", "fully_connected"),
    "Convolution": Counterpart("mx.npx", "convolution"),
    "Pooling": Counterpart("mx.npx", "pooling"),
    "BatchNorm": Counterpart("mx.npx", "batch_norm"),
}
"""The calls that differ in ``mx.np`` (whose extensions are ``mx.npx``), by the ``mx.nd`` name."""


def answers(counterpart: Counterpart, namespace: str) -> bool:
    """Whether a listed counterpart is how ``namespace`` calls the operator: ``mx.np``'s entries are
    the ``mx.np`` group's, and answer for ``mx.npx`` only where they live there (``fully_connected``),
    so ``mx.np.add`` is not found twice; ``mx.nd`` is the source, called by the name itself."""
    return namespace == "mx.np" or (namespace == "mx.npx" and counterpart.namespace == "mx.npx")
