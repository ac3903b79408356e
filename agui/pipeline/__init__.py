"""The stream processor: bytes or events in, typed updates out.

::

    wire_stage (SSE framing, decode) -> normalize (chunks) -> verify (ordering rules)
        -> apply (Conversation) -> Updates

:class:`~agui.pipeline.core.Pipeline` chains the stages; each stage is usable alone:
:mod:`~agui.pipeline.wire_stage`, :mod:`~agui.pipeline.normalize`,
:mod:`~agui.pipeline.verify`, :mod:`~agui.pipeline.apply`. Beside them: the run lifecycle
(:mod:`~agui.pipeline.lifecycle`), producer profiles (:mod:`~agui.pipeline.profiles`) and
stream compaction (:mod:`~agui.pipeline.compact`).
"""
