"""board-watch, the AG-UI terminal client: renderers, board panel, commands.

Entry point :func:`agui.cli.main.main`; pure pieces :mod:`agui.cli.render`,
:mod:`agui.cli.board`, :mod:`agui.cli.sanitize`.
"""
