"""board-watch, the AG-UI terminal client: renderers, board panel, commands.

Entry point :func:`agui._cli.main.main`; pure pieces :mod:`agui._lines.render`,
:mod:`agui._cli.board`, :mod:`agui._lines.sanitize`, :mod:`agui._lines.text`.

Ctrl-C while board-watch is still starting: when this package is imported as
the program itself (the ``board-watch`` script or ``python -m agui._cli``), a
SIGINT is only recorded until :func:`agui._cli.main.main` has imported what it
needs (a KeyboardInterrupt raised inside an extension module's import can
crash it), then it counts as a Ctrl-C: ``board-watch: error: interrupted``,
exit 130. A ``sys.excepthook`` does the same for a KeyboardInterrupt that
escapes before ``main`` runs; every other exception goes to the previous hook.
"""

import os as _os
import signal as _signal
import sys as _sys
from collections.abc import Callable as _Callable
from types import FrameType as _FrameType
from types import TracebackType as _TracebackType

_ExceptHook = _Callable[[type[BaseException], BaseException, _TracebackType | None], object]

#: SIGINTs received while start-up deferred them (see the module doc)
deferred_interrupts: list[int] = []


def defer_sigint(signum: int, frame: _FrameType | None) -> None:
    """The SIGINT handler while start-up defers Ctrl-C: records ``signum``."""
    deferred_interrupts.append(signum)


def _as_program() -> bool:
    name = _os.path.basename(_sys.argv[0]) if _sys.argv else ""
    return name in ("board-watch", "-m")


def _interrupted_hook(
    kind: type[BaseException],
    value: BaseException,
    tb: _TracebackType | None,
    _previous: _ExceptHook = _sys.excepthook,
) -> None:
    if issubclass(kind, KeyboardInterrupt):
        try:
            _sys.stderr.write("board-watch: error: interrupted\n")
            _sys.stderr.flush()
        except (AttributeError, OSError, ValueError):
            pass
        _os._exit(130)
    _previous(kind, value, tb)


def _missing_extra() -> str | None:
    """The first library of the ``cli`` extra that is not installed, or None."""
    from importlib.util import find_spec

    return next((name for name in ("rich", "re2") if find_spec(name) is None), None)


_MISSING = _missing_extra()
if _MISSING is not None:
    from agui._extras import extra_hint

    _HINT = extra_hint("board-watch", "cli", _MISSING)
    if _as_program():  # the console script: one line, no traceback
        _sys.stderr.write(f"board-watch: error: {_HINT}\n")
        raise SystemExit(1)
    raise ModuleNotFoundError(_HINT, name=_MISSING)

if _as_program():
    _sys.excepthook = _interrupted_hook
    try:
        if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
            _signal.signal(_signal.SIGINT, defer_sigint)
    except (ValueError, OSError):  # not the main thread
        pass
