"""Updates as labelled text lines: the renderer board-watch prints and ``agui.testing``
pins as transcripts (:mod:`agui._lines.render`), its formatting helpers
(:mod:`agui._lines.formats`), terminal-safe text (:mod:`agui._lines.sanitize`) and
display widths (:mod:`agui._lines.text`). Pure: no I/O, no terminal.

It sits below both of its users (``agui.testing`` and the CLI, ``agui._cli``), which is
why it is not inside either.
"""
