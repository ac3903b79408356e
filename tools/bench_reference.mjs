// Times the TypeScript reference client (@ag-ui/client HttpAgent) over one
// AG-UI stream served as SSE on loopback, the way tools/bench.py times ours.
// Usage: node bench_reference.mjs STREAM.jsonl [repeats]
// Prints one JSON object: {events, seconds: [..per repeat..], ok: [..per repeat..],
// messages (of the last run), failed (the first failure's message, or null)}.
// Run from the folder where @ag-ui/client is installed (tools/bench.py copies
// this file into the oracle's cache folder, outside the repository).
import http from "node:http";
import fs from "node:fs";
import { HttpAgent } from "@ag-ui/client";

const file = process.argv[2];
const repeats = Number(process.argv[3] || 1);
const lines = fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim());
const body = Buffer.from(lines.map((l) => "data: " + l + "\n\n").join(""), "utf8");
const server = http.createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    // one connection per run: a kept-alive socket closed by the server's idle
    // timeout while the client reuses it makes the next fetch fail
    res.writeHead(200, { "content-type": "text/event-stream", connection: "close" });
    // write in 64 KiB pieces, as a real server would
    for (let i = 0; i < body.length; i += 65536) res.write(body.subarray(i, i + 65536));
    res.end();
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}/agent`;
console.warn = () => {};
const first = JSON.parse(lines[0]);
const seconds = [];
const ok = [];
let messages = 0;
let failed = null;
for (let i = 0; i < repeats; i++) {
  const agent = new HttpAgent({ url, threadId: first.threadId || "t" });
  const t0 = process.hrtime.bigint();
  try {
    await agent.runAgent({ runId: first.runId || "r" }, {});
    ok.push(true);
  } catch (e) {
    ok.push(false);
    failed = failed || String((e && e.message) || e);
  }
  seconds.push(Number(process.hrtime.bigint() - t0) / 1e9);
  messages = agent.messages.length;
}
server.close();
process.stdout.write(JSON.stringify({ events: lines.length, seconds, ok, messages, failed }) + "\n");
