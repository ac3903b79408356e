"""Backends to test clients against (extra ``server``).

- :mod:`agui.backends.fake`: ``serve-fake``, the awkward-but-legal scenario
  agent on ``/agent`` plus the hand-framed illegal ``/raw/<name>`` streams
  (:mod:`agui.backends.raw`).
- :mod:`agui.backends.task_board`: a small deterministic agent with state, tools
  and an A2UI v0.9 board surface.

Both build events as plain wire-form JSON (:mod:`agui.backends._events`) with
deterministic ids and no timestamps, so transcripts are snapshot-stable.
"""
