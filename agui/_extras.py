"""The optional extras (``pip install 'agui-sdk[EXTRA]'``): importing a part whose extra is
not installed raises a ``ModuleNotFoundError`` naming the extra, not the missing library."""

from __future__ import annotations

__all__ = ["extra_hint", "needs_extra"]


def needs_extra(
    missing: ModuleNotFoundError, extra: str, libraries: tuple[str, ...], what: str
) -> ModuleNotFoundError:
    """The error to raise for ``missing`` when the module it names belongs to one of
    ``libraries`` (top-level names, e.g. ``("google",)``): "``what`` needs the ``extra``
    extra ..., pip install 'agui-sdk[extra]'". Any other missing module is ``missing`` itself
    (a broken install is not an absent extra)."""
    library = (missing.name or "").partition(".")[0]
    if library not in libraries:
        return missing
    return ModuleNotFoundError(extra_hint(what, extra, library), name=missing.name)


def extra_hint(what: str, extra: str, library: str) -> str:
    """The words of every missing-extra error: ``what`` needs the ``extra`` extra
    (``library`` is not installed), then the ``pip install`` line that brings it."""
    return (
        f"{what} needs the {extra} extra ({library} is not installed): "
        f"pip install 'agui-sdk[{extra}]'"
    )
