"""The applier: :class:`Conversation`, updated in place by AG-UI events.

See :mod:`agui.pipeline._apply.conversation` for the rules (spec reducer,
``defaultApplyEvents``) and its dispatch tables (:data:`HANDLERS`: event class
-> handler; :data:`PASS_THROUGH`: classes delivered as they are, in an
``EventReceived`` update); the conversation's components are
:mod:`agui.pipeline._apply.messages`, :mod:`agui.pipeline._apply.snapshots` and
:mod:`agui.pipeline._apply.run_events` over one :mod:`agui.pipeline._apply.message_store`;
:mod:`agui.pipeline._apply.patch` is atomic JSON Patch.
"""

from agui.pipeline._apply.conversation import HANDLERS, PASS_THROUGH, Conversation

__all__ = ["HANDLERS", "PASS_THROUGH", "Conversation"]
