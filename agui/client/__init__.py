"""The client: one conversation with an agent, run by run.

:class:`~agui.client.session.Session` holds a thread's conversation and starts runs;
:class:`~agui.client.run.Run` is one request and its response as updates;
:mod:`agui.client.sync` is the blocking facade. Around them: building a ``RunAgentInput``
(:mod:`~agui.client.request`), interrupts and resume (:mod:`~agui.client.interrupts`),
client-side tools (:mod:`~agui.client.tools`), middleware (:mod:`~agui.client.middleware`),
capabilities (:mod:`~agui.client.capabilities`) and partial tool-call arguments
(:mod:`~agui.client.partial_json`). ``Session``, ``Run``, ``SyncSession`` and the interrupt
answers ``resolved`` and ``cancelled`` are also importable from :mod:`agui`; the rest from here.
"""
