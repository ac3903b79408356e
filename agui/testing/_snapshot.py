"""A syrupy extension that stores runs as their transcripts (``.ambr`` files).

``assert run == agui_snapshot`` (the plugin's fixture, :class:`TranscriptExtension`
over syrupy's ``snapshot``) stores and compares ``run.transcript``; the file is the
same as ``assert run.transcript == snapshot`` writes, one reviewable block of
transcript lines per test, updated with ``pytest --snapshot-update``.
"""

from __future__ import annotations

from syrupy.extensions.amber import AmberSnapshotExtension
from syrupy.types import SerializableData

__all__ = ["TranscriptExtension"]


class TranscriptExtension(AmberSnapshotExtension):
    """Serializes a :class:`~agui.testing.CheckedRun` or an
    :class:`~agui.testing.AgentClient` (its whole conversation) as its transcript;
    anything else as syrupy's amber extension does."""

    def serialize(self, data: SerializableData, **kwargs: object) -> str:
        """The amber form of ``data``'s transcript (of ``data`` itself when it has none)."""
        transcript = getattr(data, "transcript", None)
        return super().serialize(transcript if isinstance(transcript, str) else data, **kwargs)
