// Our bridge to the TypeScript reference client, for tests/server/test_server_resume_processes.py:
// one run of @ag-ui/client's HttpAgent against a live server.
// Usage: node ts_client_run.mjs CACHE_DIR URL TEXT  ->  {"types": [...], "text": "...", "error": null}
// CACHE_DIR holds node_modules/@ag-ui/client (the oracle's cache).
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(join(process.argv[2], "package.json"));
const { HttpAgent } = require("@ag-ui/client");
console.warn = () => {};
const [url, text] = [process.argv[3], process.argv[4]];
const agent = new HttpAgent({
  url,
  threadId: "t-ts",
  initialMessages: [{ id: "u1", role: "user", content: text }],
});
const types = [];
let said = "";
let error = null;
try {
  await agent.runAgent(
    { runId: `ts-${process.pid}-${Date.now()}` },
    {
      onEvent: ({ event }) => { types.push(event.type); },
      onTextMessageContentEvent: ({ event }) => { said += event.delta; },
    },
  );
} catch (err) {
  error = String(err && err.message ? err.message : err);
}
process.stdout.write(JSON.stringify({ types, text: said, error }) + "\n");
