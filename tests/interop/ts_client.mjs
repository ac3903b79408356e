// Drives the TypeScript reference client (@ag-ui/client HttpAgent) against a live AG-UI
// endpoint over loopback HTTP and prints, as one JSON object, what it concluded after
// each run: outcome, error, warnings (console.warn/error), the events delivered to
// application code, the run-finished details, and the final messages and state.
//
// Usage: node ts_client.mjs CACHE_DIR < job.json, where CACHE_DIR holds node_modules/@ag-ui/client
// job: {"url", "threadId", "maxProtocolVersion"?, "runs": [{"user"?, "tools"?, "state"?,
//       "forwardedProps"?, "resume"?, "toolResults"?: [{"toolCallId", "content"}],
//       "abortOn"?: EVENT_TYPE}]}
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(path.join(process.argv[2], "package.json"));
const { HttpAgent } = require("@ag-ui/client");
const job = JSON.parse(fs.readFileSync(0, "utf8"));

const warnings = [];
console.warn = (...a) => warnings.push(a.map(String).join(" "));
console.error = (...a) => warnings.push("[error] " + a.map(String).join(" "));

const pin = job.maxProtocolVersion;
const AgentClass = pin ? class extends HttpAgent { get maxProtocolVersion() { return pin; } } : HttpAgent;
const agent = new AgentClass({ url: job.url, threadId: job.threadId });
if (job.state !== undefined) agent.setState(job.state);
let counter = 0;
const runs = [];
for (const spec of job.runs) {
  counter += 1;
  if (spec.user !== undefined) agent.addMessage({ id: `user-${counter}`, role: "user", content: spec.user });
  for (const r of spec.toolResults || []) {
    agent.addMessage({ id: `result-${counter}-${r.toolCallId}`, role: "tool", toolCallId: r.toolCallId, content: r.content });
  }
  const before = warnings.length;
  const delivered = [];
  const runErrors = [];
  let finished = null, outcome = "completed", error = null, result = null;
  try {
    const r = await agent.runAgent(
      { runId: `ts-run-${counter}`, tools: spec.tools, forwardedProps: spec.forwardedProps, resume: spec.resume },
      {
        onEvent: ({ event }) => {
          delivered.push(event);
          if (spec.abortOn && event.type === spec.abortOn) agent.abortRun();
        },
        onRunErrorEvent: ({ event }) => { runErrors.push({ message: event.message, code: event.code ?? null }); },
        onRunFinishedEvent: (params) => {
          finished = { outcome: params.outcome ?? null, result: params.result ?? null,
                       interrupts: params.interrupts ?? null,
                       pendingToolCallIds: params.pendingToolCallIds ?? null, event: params.event };
        },
      },
    );
    result = r && r.result !== undefined ? r.result : null;
  } catch (e) {
    outcome = "failed";
    error = String((e && e.message) || e);
  }
  runs.push({
    outcome, error, runErrors, finished, result,
    warnings: warnings.slice(before),
    eventTypes: delivered.map((e) => e.type),
    events: delivered,
    pendingInterrupts: agent.pendingInterrupts || [],
  });
}
process.stdout.write(JSON.stringify({ client: "@ag-ui/client", runs, messages: agent.messages, state: agent.state }) + "\n");
