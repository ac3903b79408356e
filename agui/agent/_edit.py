"""Editing an agent's conversation: replace messages or state, add messages.

Through the session's own editing (:meth:`agui.client._session.Session.set_messages`,
:meth:`~agui.client._session.Session.add_messages`, :meth:`~agui.client._session.Session.set_state`),
so an agent and a bare ``Session`` edit by the same rules: ids are unique
(``ValueError`` otherwise, nothing changed), the new list is the whole list
(``set_messages`` keeps nothing of the old one), a state is kept as a private
copy. ``Session`` refuses those edits while a run streams; a subscriber's
mutation lands between two events of the run it is called from, so while the
session streams the editor makes the same edits on the session's
conversation directly (the conversation methods the ``Session`` methods call,
after the same conversion).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import msgspec

from agui._jsonvalue import JSONValue
from agui.client._input import convert_list
from agui.pipeline._apply.patch import clone_json
from agui.types import Message

if TYPE_CHECKING:
    from agui.client._session import Session
    from agui.pipeline._apply import Conversation
    from agui.types import Message

__all__ = ["ConversationEditor"]


class ConversationEditor:
    """Edits ``session``'s conversation, between runs or between two events of a run.

    Raises (every method taking messages):
        agui.errors.DecodeError: a message given as a dict does not fit ``Message``.
        ValueError: two messages share an id (or an added one is already there);
            nothing is changed.
    """

    def __init__(self, session: Session) -> None:
        self.session: Session = session

    @property
    def conversation(self) -> Conversation:
        """The session's conversation (read at each call)."""
        return self.session.conversation

    @property
    def state(self) -> Any:
        """The state as the reference client reads it: ``{}`` while there is none
        (:attr:`agui.pipeline._apply.Conversation.state_absent`), else the
        conversation's state (a null snapshot reads ``None``). Treat it as read-only."""
        conv = self.conversation
        return {} if conv.state_absent else conv.state

    def set_messages(self, messages: Iterable[Any]) -> list[Message]:
        """Replace the messages (structs or wire dicts); returns them as structs."""
        return self._edit(messages, self.conversation.replace_messages, self.session.set_messages)

    def add_messages(self, messages: Iterable[Any]) -> list[Message]:
        """Append messages (structs or wire dicts); returns the new ones as structs."""
        return self._edit(messages, self.conversation.add_messages, self.session.add_messages)

    def _edit(
        self,
        messages: Iterable[Any],
        in_run: Callable[[list[Message]], object],
        between_runs: Callable[[list[Message]], object],
    ) -> list[Message]:
        """``messages`` as structs, handed to ``in_run`` while a run streams (its
        conversation takes them at once) or else to ``between_runs`` (the session's
        edit, which a streaming session refuses)."""
        structs = convert_list(messages, Message, "messages")
        (in_run if self.session.is_streaming else between_runs)(structs)
        return structs

    def set_state(self, state: JSONValue) -> None:
        """Replace the state (any JSON; ``None``: absent, sent as ``{}``)."""
        if self.session.is_streaming:
            self.conversation.replace_state(clone_json(state))
        else:
            self.session.set_state(state)

    def save(self) -> tuple[list[Message], Any]:
        """The messages and state as they are (copies), for :meth:`restore`."""
        conv = self.conversation
        return [msgspec.structs.replace(m) for m in conv.messages], copy.deepcopy(conv.state)

    def restore(self, saved: tuple[list[Message], Any]) -> None:
        """Put back what :meth:`save` returned (exactly: messages an event added
        since are gone, whatever their role)."""
        messages, state = saved
        self.set_messages(messages)
        if self.conversation.state != state:
            self.set_state(state)
