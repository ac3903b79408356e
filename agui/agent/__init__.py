"""The ``@ag-ui/client`` agent API in Python names, as a thin face over :class:`agui.client._session.Session`.

::

    agent = HttpAgent("http://127.0.0.1:8000/agent", initial_messages=[...])
    sub = agent.subscribe(AgentSubscriber(on_text_message_content_event=show))
    outcome = await agent.run_agent(tools=[...])
    outcome.result, outcome.new_messages
    sub.unsubscribe()

:class:`AbstractAgent` (implement ``run(input)``) and :class:`HttpAgent` own one
session; subscribers (:mod:`agui.agent._subscriber`) are called by a middleware
stage (:mod:`agui.agent._subscriber_stage`); mutations edit the session's conversation
(:mod:`agui.agent._edit`). The README's "The @ag-ui/client API in Python" maps
every reference name to ours.
"""

from agui.agent._agent import (
    AbstractAgent,
    AgentOptions,
    HttpAgent,
    RunAgentResult,
    Subscription,
)
from agui.agent._edit import ConversationEditor
from agui.agent._subscriber import (
    CALLBACKS,
    AgentStateMutation,
    AgentSubscriber,
    Callback,
    MaybeMutation,
    SubscriberParams,
    callback_name,
)

__all__ = [
    "CALLBACKS",
    "AbstractAgent",
    "AgentOptions",
    "AgentStateMutation",
    "AgentSubscriber",
    "Callback",
    "ConversationEditor",
    "HttpAgent",
    "MaybeMutation",
    "RunAgentResult",
    "SubscriberParams",
    "Subscription",
    "callback_name",
]
