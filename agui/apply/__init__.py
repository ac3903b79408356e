"""The applier: :class:`Conversation`, updated in place by AG-UI events.

See :mod:`agui.apply.conversation` for the rules (spec reducer,
``defaultApplyEvents``) and its dispatch tables (:data:`HANDLERS`: event class
-> handler; :data:`PASS_THROUGH`: classes delivered as they are, in an
``EventReceived`` update); :mod:`agui.apply.messages` and
:mod:`agui.apply.snapshots` hold the handlers, :mod:`agui.apply.patch` atomic
JSON Patch.
"""

from agui.apply.conversation import HANDLERS, PASS_THROUGH, Conversation

__all__ = ["HANDLERS", "PASS_THROUGH", "Conversation"]
