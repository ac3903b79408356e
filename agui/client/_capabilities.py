"""Reading an agent's capabilities (``AgentCapabilities``) tolerantly.

The schema describes ``AgentCapabilities`` and its sections (``identity``, ``transport``,
``tools`` ...) as closed objects, so the generated structs reject unknown members in a strict
decode. Capabilities are advertised by agents newer or older than this client, though, and a
section or flag this client does not know is no reason to refuse the rest: the spec's
processing rule for closed objects is to strip what is not recognised and warn.
:func:`decode_capabilities` does that with the same lenient repairs the event decoder uses
(unknown members stripped, a 0.x ``null`` in an optional slot read as absent, an unknown value
of a closed string set stripped), each reported as a :class:`~agui.wire._lenient.DecodeWarning`
and logged on the ``agui.client._capabilities`` logger. The open ``custom`` section keeps everything.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import msgspec

from agui._jsonvalue import is_json_object
from agui.errors import DecodeError
from agui.types import AgentCapabilities
from agui.wire._fallback import loads_json_text
from agui.wire._lenient import DROP, DecodeWarning, repair
from agui.wire._shapes import shape_of

__all__ = ["decode_capabilities"]

log: logging.Logger = logging.getLogger("agui.client.capabilities")

_SHAPE = shape_of(AgentCapabilities)
_AT = re.compile(r"^(?P<msg>.*?)(?: - at `(?P<path>[^`]*)`)?$", re.DOTALL)


def decode_capabilities(
    data: bytes | str | dict[str, Any],
    *,
    warnings: list[DecodeWarning] | None = None,
) -> AgentCapabilities:
    """Decode ``AgentCapabilities`` from JSON text/bytes or an already parsed dict, leniently.

    Unknown members (of the capabilities object or any section of it) are stripped, each
    with a :class:`~agui.wire._lenient.DecodeWarning` (code ``unknown_property``, its path
    e.g. ``$.tools.streamingArgs``) appended to ``warnings`` when given and logged at WARNING
    on ``agui.client._capabilities``; so are a legacy ``null`` in an optional slot and an unknown
    value of a closed string set.

    Raises:
        DecodeError: not JSON, not a JSON object, or a known member holding a value of the
            wrong kind (``"tools": {"supported": "yes"}``); ``path`` names the value.
    """
    if is_json_object(data):
        obj: Any = data
    else:
        text = data.decode("utf-8", "replace") if isinstance(data, bytes | bytearray) else data
        try:
            obj = loads_json_text(text)
        except (ValueError, RecursionError) as exc:
            raise DecodeError(f"capabilities are not JSON: {exc}", value=text[:200]) from None
    if not is_json_object(obj):
        raise DecodeError("capabilities must be a JSON object", value=obj)
    found: list[DecodeWarning] = []
    fixed = repair(obj, _SHAPE, [], found)
    for w in found:
        log.warning("agent capabilities: %s", w)
    if warnings is not None:
        warnings.extend(found)
    if fixed is DROP:  # pragma: no cover - the root object has no required member to lose
        fixed = {}
    try:
        return msgspec.convert(fixed, type=AgentCapabilities)
    except msgspec.ValidationError as exc:
        match = _AT.match(str(exc))
        msg = match["msg"] if match else str(exc)
        path = (match["path"] if match else None) or "$"
        reason = msg.replace("Expected `", "expected ").replace("`, got `", ", received ")
        raise DecodeError(reason.replace("`", ""), path=path) from None
