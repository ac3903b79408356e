"""Names that moved keep working for one release, with a DeprecationWarning naming their home.

A package lists its moved names (name -> home module) and calls :func:`moved_name` from its
module ``__getattr__`` (PEP 562), so ``package.X`` and ``from package import X`` both warn.
CHANGELOG.md lists every moved name under the release that moved it.
"""

from __future__ import annotations

import importlib
import warnings

__all__ = ["REMOVED_IN", "moved_name"]

#: the release that drops the moved names (they work, with a warning, in the one before)
REMOVED_IN = "0.2.0"


def moved_name(package: str, name: str, home: str) -> object:
    """``home.name``, after a DeprecationWarning (at the caller of the module's ``__getattr__``)
    saying ``package.name`` moved to ``home``. Raises what importing ``home`` raises."""
    warnings.warn(
        f"{package}.{name} has moved and goes in {REMOVED_IN}: import it from its home,"
        f" `from {home} import {name}`",
        DeprecationWarning,
        stacklevel=3,
    )
    return getattr(importlib.import_module(home), name)
