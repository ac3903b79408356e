"""The applier: :class:`Conversation`, updated in place by AG-UI events.

See :mod:`agui.pipeline.apply.conversation` for the rules (spec reducer,
``defaultApplyEvents``) and its dispatch tables (:data:`HANDLERS`: event class
-> handler; :data:`PASS_THROUGH`: classes delivered as they are, in an
``EventReceived`` update); the conversation's components are
:mod:`agui.pipeline.apply.messages`, :mod:`agui.pipeline.apply.snapshots` and
:mod:`agui.pipeline.apply.runs` over one :mod:`agui.pipeline.apply.store`;
:mod:`agui.pipeline.apply.patch` is atomic JSON Patch.
"""

from agui.pipeline.apply.conversation import HANDLERS, PASS_THROUGH, Conversation

__all__ = ["HANDLERS", "PASS_THROUGH", "Conversation"]
