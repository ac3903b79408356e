"""agui.client._capabilities.decode_capabilities: AgentCapabilities read tolerantly."""

from __future__ import annotations

import logging

import msgspec
import pytest

from agui.client._capabilities import decode_capabilities
from agui.errors import DecodeError
from agui.types import AgentCapabilities, ToolsCapabilities

REFERENCE_EXAMPLE = {
    "identity": {"name": "My Agent", "type": "custom", "version": "1.0.0"},
    "transport": {"streaming": True},
    "tools": {"supported": True, "clientProvided": True},
    "state": {"snapshots": True, "deltas": True},
    "humanInTheLoop": {"supported": True, "approvals": True},
}


def test_known_capabilities_decode_to_the_generated_structs():
    caps = decode_capabilities(REFERENCE_EXAMPLE)
    assert isinstance(caps, AgentCapabilities)
    assert caps.identity.name == "My Agent" and caps.transport.streaming is True
    assert caps.tools == ToolsCapabilities(supported=True, client_provided=True)
    assert caps.human_in_the_loop.approvals is True
    assert msgspec.to_builtins(caps) == REFERENCE_EXAMPLE


def test_unknown_members_are_stripped_with_a_warning_each(caplog):
    found = []
    data = {
        "tools": {"supported": True, "streamingArgs": True},
        "teleport": {"enabled": True},
        "custom": {"anything": {"goes": [1]}},
    }
    with caplog.at_level(logging.WARNING, logger="agui.client.capabilities"):
        caps = decode_capabilities(data, warnings=found)
    assert caps.tools == ToolsCapabilities(supported=True)
    assert caps.custom == {"anything": {"goes": [1]}}
    assert [(w.code, w.path) for w in found] == [
        ("unknown_property", "$.tools.streamingArgs"),
        ("unknown_property", "$.teleport"),
    ]
    assert len([r for r in caplog.records if r.name == "agui.client.capabilities"]) == 2
    assert data["tools"] == {"supported": True, "streamingArgs": True}  # input not mutated


def test_the_strict_struct_still_rejects_unknown_members():
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"teleport": {}}, AgentCapabilities)


def test_a_legacy_null_section_reads_as_absent():
    found = []
    caps = decode_capabilities(b'{"state": null, "tools": {"supported": true}}', warnings=found)
    assert caps.state is msgspec.UNSET
    assert [w.code for w in found] == ["legacy_null"]


def test_json_text_and_bytes_are_accepted():
    assert decode_capabilities('{"reasoning": {"supported": true}}').reasoning.supported is True
    assert decode_capabilities(b"{}") == AgentCapabilities()


def test_a_known_member_of_the_wrong_kind_is_a_decode_error_naming_its_path():
    with pytest.raises(DecodeError) as info:
        decode_capabilities({"tools": {"supported": "yes"}})
    assert info.value.path == "$.tools.supported"
    assert "expected bool" in info.value.reason


@pytest.mark.parametrize("data", ["[1]", "{x", b"\xff", "null"])
def test_not_a_json_object_is_a_decode_error(data):
    with pytest.raises(DecodeError):
        decode_capabilities(data)
