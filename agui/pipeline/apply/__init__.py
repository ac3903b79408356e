"""The applier: :class:`Conversation`, updated in place by AG-UI events.

See :mod:`agui.pipeline.apply.conversation` for the rules (spec reducer,
``defaultApplyEvents``) and its dispatch tables (:data:`HANDLERS`: event class
-> handler; :data:`PASS_THROUGH`: classes delivered as they are, in an
``EventReceived`` update); :mod:`agui.pipeline.apply.messages` and
:mod:`agui.pipeline.apply.snapshots` hold the handlers, :mod:`agui.pipeline.apply.patch` atomic
JSON Patch.
"""

from agui.pipeline.apply.conversation import HANDLERS, PASS_THROUGH, Conversation

__all__ = ["HANDLERS", "PASS_THROUGH", "Conversation"]
