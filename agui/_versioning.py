"""Protocol versions: which one this client implements, and what a RUN_STARTED declares.

Spec ``basic/versioning``: a client serves a run whose declared
``protocolVersion`` is newer than, or not comparable with, its own anyway,
under its own processing model; we say so with a WarningUpdate.
"""

from __future__ import annotations

import re

from agui.updates import WarningUpdate

__all__ = ["IMPLEMENTED_PROTOCOL_VERSION", "parse_version", "version_warning"]

IMPLEMENTED_PROTOCOL_VERSION = "1.1"
"""The newest AG-UI protocol version this client can interpret (1.0 plus 1.1's
optional ``encryptedValueType``)."""

_VERSION_RE = re.compile(r"^(\d+)\.(\d+)$")


def parse_version(value: object) -> tuple[int, int] | None:
    """``"1.0"`` -> ``(1, 0)``; None for anything that is not ``MAJOR.MINOR``."""
    if not isinstance(value, str):
        return None
    m = _VERSION_RE.match(value)
    return (int(m.group(1)), int(m.group(2))) if m else None


def version_warning(ours: tuple[int, int] | None, declared: str) -> WarningUpdate | None:
    """The warning for a RUN_STARTED declaring ``declared`` to a client
    implementing ``ours``: ``protocol_version_uninterpretable``,
    ``protocol_version_newer`` or ``protocol_version_other_major``; None when
    the declared version is one this client implements."""
    theirs = parse_version(declared)
    mine = f"{ours[0]}.{ours[1]}" if ours else "?"
    if theirs is None:
        return WarningUpdate(
            "protocol_version_uninterpretable",
            f"RUN_STARTED declares protocolVersion {declared!r}, which this client "
            f"cannot interpret; proceeding as AG-UI {mine}",
            "protocolVersion",
        )
    if ours is not None and (theirs[0] != ours[0] or theirs[1] > ours[1]):
        return WarningUpdate(
            "protocol_version_newer" if theirs > ours else "protocol_version_other_major",
            f"RUN_STARTED declares protocolVersion {declared!r}; this client implements "
            f"AG-UI {mine} and proceeds under its processing model",
            "protocolVersion",
        )
    return None
