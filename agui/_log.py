"""Logging for the SDK: the stdlib ``logging`` module, under the ``agui`` logger.

Conventions: every module logs through a child of :data:`logger`
(``logging.getLogger(__name__)`` in ``agui.*`` modules, or :func:`get_logger`), at ``DEBUG`` for
per-event tracing and ``INFO``/``WARNING`` for what an application may want to see. The library
never configures handlers itself (a :class:`logging.NullHandler` on :data:`logger` keeps Python
from printing "no handlers" fallbacks); the application does, or calls :func:`enable_debug`.
Text that came from an agent is logged with ``%r`` (never interpolated raw), so a log line
cannot carry terminal escape sequences.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

__all__ = ["LOGGER_NAME", "disable_debug", "enable_debug", "get_logger", "logger"]

#: Name of the SDK's root logger.
LOGGER_NAME = "agui"

#: The SDK's root logger; every ``agui.*`` module logger is a child of it.
logger: logging.Logger = logging.getLogger(LOGGER_NAME)
logger.addHandler(logging.NullHandler())

_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"
_DEBUG_HANDLER_ATTR = "_agui_debug_handler"


def get_logger(name: str = "") -> logging.Logger:
    """The ``agui`` logger, or its child ``agui.<name>`` (``get_logger("wire")``).

    A name already starting with ``agui.`` (a module's ``__name__``) is used as it is.
    """
    if not name or name == LOGGER_NAME:
        return logger
    if name.startswith(LOGGER_NAME + "."):
        return logging.getLogger(name)
    return logging.getLogger(f"{LOGGER_NAME}.{name}")


def enable_debug(stream: TextIO | None = None, *, level: int = logging.DEBUG) -> logging.Handler:
    """Log the SDK's records at ``level`` (default DEBUG) to ``stream`` (default stderr).

    Adds one :class:`logging.StreamHandler` to the ``agui`` logger and sets the logger's level;
    calling it again replaces that handler (no duplicated lines). Records still propagate to the
    root logger as usual. Returns the handler (remove it with :func:`disable_debug`).
    """
    disable_debug()
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(logging.Formatter(_FORMAT))
    handler.setLevel(level)
    setattr(handler, _DEBUG_HANDLER_ATTR, True)
    logger.addHandler(handler)
    logger.setLevel(level)
    return handler


def disable_debug() -> None:
    """Remove the handler :func:`enable_debug` added and reset the ``agui`` logger's level."""
    for handler in list(logger.handlers):
        if getattr(handler, _DEBUG_HANDLER_ATTR, False):
            logger.removeHandler(handler)
            handler.close()
    logger.setLevel(logging.NOTSET)
