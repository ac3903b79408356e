"""board-watch, the AG-UI terminal client: renderers, board panel, commands.

Entry point :func:`agui.cli.main.main`; pure pieces :mod:`agui.cli.render`,
:mod:`agui.cli.board`, :mod:`agui.cli.sanitize`, :mod:`agui.cli.text`.

Importing this package installs a ``sys.excepthook`` for one case only: a
Ctrl-C that lands while board-watch is still importing (before
:func:`agui.cli.main.main` can catch it) prints ``board-watch: error:
interrupted`` and exits 130 instead of a traceback. Every other exception is
handed to the hook that was there before.
"""

import sys as _sys


def _interrupted_hook(kind, value, tb, _previous=_sys.excepthook):
    if kind is not None and issubclass(kind, KeyboardInterrupt):
        import os

        try:
            _sys.stderr.write("board-watch: error: interrupted\n")
            _sys.stderr.flush()
        except (AttributeError, OSError, ValueError):
            pass
        os._exit(130)
    _previous(kind, value, tb)


_sys.excepthook = _interrupted_hook
