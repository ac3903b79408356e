"""The applier: :class:`Conversation`, updated in place by AG-UI events.

See :mod:`agui.apply.conversation` for the rules (spec reducer,
``defaultApplyEvents``) and :mod:`agui.apply.patch` for atomic JSON Patch.
"""

from agui.apply.conversation import Conversation

__all__ = ["Conversation"]
