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

# ``agui.pipeline`` was one module before it became this package: its names moved to
# :mod:`agui.pipeline.core` (and the protocol version to :mod:`agui.versioning`). They keep
# working with a DeprecationWarning naming their home (agui._moved; CHANGELOG.md).
_MOVED: dict[str, str] = {
    "IMPLEMENTED_PROTOCOL_VERSION": "agui.versioning",
    "Pipeline": "agui.pipeline.core",
    "VerifyMode": "agui.pipeline.core",
}


def __getattr__(name: str) -> object:
    home = _MOVED.get(name)
    if home is None:
        raise AttributeError(f"module 'agui.pipeline' has no attribute {name!r}")
    from agui._moved import moved_name

    return moved_name("agui.pipeline", name, home)
