"""The upstream conformance streams (../shared), as the events our strict decoder accepts."""

from __future__ import annotations

import json

from agui._versioning import IMPLEMENTED_PROTOCOL_VERSION
from agui.errors import DecodeError
from agui.wire import decode_event
from support import shared_path as shared


def valid_conformance_events() -> list[dict]:
    """Every event of the conformance streams that decodes strictly (skips without ../shared)."""
    out = []
    for path in sorted(
        shared(f"upstream/agui/spec-{IMPLEMENTED_PROTOCOL_VERSION}/conformance/streams").glob(
            "*.json"
        )
    ):
        for ev in json.loads(path.read_text(encoding="utf-8"))["stream"]:
            try:
                decode_event(json.dumps(ev), strict=True)
            except DecodeError:
                continue
            out.append(ev)
    return out
