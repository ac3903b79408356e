"""Editing a session's conversation between events: replace messages or state, add messages.

Done through the conversation's own applier (:meth:`agui.apply.Conversation.apply`)
with the protocol's snapshot events, so the one engine stays the one writer:
``set_state`` applies a STATE_SNAPSHOT, ``set_messages`` / ``add_messages`` a
MESSAGES_SNAPSHOT. A MESSAGES_SNAPSHOT reconciles by id (spec): the given
messages replace the list, except client-only activity messages of a type the
new list has none of, which are kept (as a snapshot from the agent would
keep them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import msgspec

from agui.request import convert_list

if TYPE_CHECKING:
    from agui.apply import Conversation
    from agui.session import Session
    from agui.types import Message

__all__ = ["ConversationEditor"]


class ConversationEditor:
    """Edits ``session.conversation`` in place (safe mid-run: the run's pipeline keeps
    applying to the same conversation).

    Raises (every method taking messages):
        agui.errors.DecodeError: a message given as a dict does not fit ``Message``.
    """

    def __init__(self, session: Session) -> None:
        self.session: Session = session

    @property
    def conversation(self) -> Conversation:
        """The session's conversation (read at each call)."""
        return self.session.conversation

    def set_messages(self, messages: Iterable[Any]) -> list[Message]:
        """Replace the messages (structs or wire dicts); returns them as structs."""
        from agui.types import Message, MessagesSnapshotEvent

        structs = convert_list(messages, Message, "messages")
        self.conversation.apply(MessagesSnapshotEvent(messages=structs))
        return structs

    def add_messages(self, messages: Iterable[Any]) -> list[Message]:
        """Append messages (structs or wire dicts); returns the new ones as structs."""
        from agui.types import Message

        structs = convert_list(messages, Message, "messages")
        self.set_messages([*self.conversation.messages, *structs])
        return structs

    def set_state(self, state: Any) -> None:
        """Replace the state (any JSON; ``None`` is a real replacement)."""
        from agui.types import StateSnapshotEvent

        self.conversation.apply(StateSnapshotEvent(snapshot=state))

    def save(self) -> tuple[list[Message], Any]:
        """The messages and state as they are (copies), for :meth:`restore`."""
        conv = self.conversation
        return [msgspec.structs.replace(m) for m in conv.messages], _copy(conv.state)

    def restore(self, saved: tuple[list[Message], Any]) -> None:
        """Put back what :meth:`save` returned."""
        messages, state = saved
        self.set_messages(messages)
        if _copy(self.conversation.state) != state:
            self.set_state(state)


def _copy(value: Any) -> Any:
    import copy

    return copy.deepcopy(value)
