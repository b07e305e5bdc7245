"""Operator selections in the names users know, not only the registry's.

``--ops add`` means what ``mx.nd.add`` calls (``broadcast_add``); ``mx.np.add`` is ``_npi_add``,
``torch.nn.functional.conv2d`` (or ``F.conv2d``) is ``conv2d``. A registry name (canonical or alias)
selects itself; any other name is read as a public function, qualified by a namespace in any spelling
its framework accepts (``namespaces.SPELLINGS``: ``mx.nd``, ``nd``, ``mxnet.ndarray``) or unqualified
(searched in ``namespaces.UNQUALIFIED_SEARCH``), and selects the registry operator that function
calls (``namespaces.called_operator``). A name of another framework is refused with the flag that
selects it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from opperf.frameworks import FRAMEWORKS, describe, framework_module
from opperf.operators.counterparts import counterparts, several_operators
from opperf.utils.errors import OpperfError, suggest


@dataclass(frozen=True)
class PublicName:
    """A name typed in a selection, the public function it names, and the registry operator it calls."""

    typed: str
    namespace: str
    function: str
    operator: str

    def describe(self) -> str:
        return f"{self.typed} selects {self.operator} (what {self.namespace}.{self.function} calls)"


def split_qualified(framework: str, typed: str) -> tuple[tuple[str, ...], str]:
    """The namespaces ``typed`` may be in and its function name: ``nd.add`` is (("mx.nd",), "add"),
    ``add`` is every namespace of the framework's unqualified search."""
    namespaces = framework_module(framework, "namespaces")
    prefix, _, name = typed.rpartition(".")
    if not prefix:
        return namespaces.UNQUALIFIED_SEARCH, typed
    namespace = namespaces.SPELLINGS.get(prefix)
    return ((namespace,) if namespace else ()), name


def resolve_public_name(framework: str, typed: str) -> PublicName | None:
    """What the public function ``typed`` calls in ``framework``'s registry, or None when it names none."""
    namespaces = framework_module(framework, "namespaces")
    candidates, name = split_qualified(framework, typed)
    for namespace in candidates:
        operator = namespaces.called_operator(namespace, name)
        if operator is not None:
            return PublicName(typed, namespace, name, operator)
    return None


def resolve_selection(
    framework: str, typed_names: Iterable[str], registry_names: Mapping[str, str]
) -> tuple[list[str], list[PublicName]]:
    """The canonical registry operator each typed name selects, in order, and the public names among
    them (to tell the user what they map to); ``registry_names`` maps every registered name (aliases
    included) to its canonical one. A name that selects nothing raises OpperfError with the closest
    names and, for another framework's name, the flag that selects it."""
    chosen, public_names = [], []
    for typed in typed_names:
        if typed in registry_names:
            chosen.append(registry_names[typed])
            continue
        public = resolve_public_name(framework, typed)
        if public is None or public.operator not in registry_names:
            raise OpperfError(_unknown(framework, typed, registry_names))
        chosen.append(registry_names[public.operator])
        public_names.append(public)
    return chosen, public_names


def _unknown(framework: str, typed: str, registry_names: Mapping[str, str]) -> str:
    candidates, name = split_qualified(framework, typed)
    several = several_operators(framework, name) if candidates else ()
    if several:
        return (
            f"{typed} calls several operators ({', '.join(several)}), not one; select those: "
            f"--ops {','.join(several)}"
        )
    mine = [operator for operator in counterparts(framework, name) if operator in registry_names]
    shown = describe(framework).display_name
    namespaces = framework_module(framework, "namespaces")
    for namespace in candidates if not mine else ():
        reason = namespaces.no_operator(namespace, name)
        if reason is not None:
            return f"{typed} is {shown}'s {namespace}.{name}, which is no operator opperf times: {reason}"
    counterpart = (
        f"; {shown}'s operator{' is' if len(mine) == 1 else 's are'} {', '.join(mine)}" if mine else ""
    )
    elsewhere = _in_other_framework(framework, typed)
    if elsewhere is not None:
        other, public = elsewhere
        return (
            f"unknown {framework} operator {typed!r}: it is {other}'s {public.namespace}.{public.function} "
            f"(operator {public.operator}); select it with --framework {other}{counterpart}"
        )
    if counterpart:
        return f"unknown {framework} operator {typed!r}: {name} is another framework's name{counterpart}"
    message = f"unknown operator {typed!r}{suggest(name, registry_names)}"
    if "." in typed and not candidates:
        known = sorted(set(framework_module(framework, "namespaces").SPELLINGS.values()))
        message += f" ({framework} namespaces: {', '.join(known)})"
    return message


def _in_other_framework(framework: str, typed: str) -> tuple[str, PublicName] | None:
    """The first other installed framework whose public function ``typed`` names, with what it calls."""
    for other in FRAMEWORKS:
        if other == framework:
            continue
        if not split_qualified(other, typed)[0] or not describe(other).installed:
            continue
        public = resolve_public_name(other, typed)
        if public is not None:
            return other, public
    return None
