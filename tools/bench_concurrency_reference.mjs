// The concurrency benchmark's client side for the TypeScript reference client
// (@ag-ui/client HttpAgent), in the same shape as tools/bench_conc_client.py:
// N runs at once in this process against URL/paced?... of tools/bench_sse_server.py.
// Usage: node bench_concurrency_reference.mjs URL N EVENTS RATE
// Prints one JSON object: {events, wall, cpu (s), base_kib, peak_kib, lat_us: [p50, p99, max], errors}.
// Each TEXT_MESSAGE_CONTENT's delta is the server's time_ns when it wrote the frame;
// the latency is taken in the subscriber (user code) against this machine's wall clock.
// Run from the folder where @ag-ui/client is installed (tools/bench.py copies it there).
import { HttpAgent } from "@ag-ui/client";

const [base, nArg, eventsArg, rateArg] = process.argv.slice(2);
const n = Number(nArg);
const events = Number(eventsArg);
const rate = Number(rateArg);
console.warn = () => {};
const nowNs = () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
const lat = [];
const errors = [];
let got = 0;
const baseKib = process.resourceUsage().maxRSS;
const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
await Promise.all(
  Array.from({ length: n }, async (_, i) => {
    const offset = rate ? i / n / rate : 0;
    const agent = new HttpAgent({
      url: `${base}/paced?events=${events}&rate=${rate}&offset=${offset}`,
      threadId: "thread-bench",
    });
    try {
      await agent.runAgent(
        { runId: `r${i}` },
        {
          onTextMessageContentEvent({ event }) {
            const sent = BigInt(event.delta.split(" ")[0]);
            lat.push(Number(nowNs() - sent) / 1000);
            got += 1;
          },
        },
      );
    } catch (e) {
      if (errors.length < 3) errors.push(String((e && e.message) || e));
    }
  }),
);
const wall = Number(process.hrtime.bigint() - t0) / 1e9;
const used = process.cpuUsage(cpu0);
lat.sort((a, b) => a - b);
const pick = (q) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(q * lat.length))] : 0);
process.stdout.write(
  JSON.stringify({
    events: got,
    wall,
    cpu: (used.user + used.system) / 1e6,
    base_kib: baseKib,
    peak_kib: process.resourceUsage().maxRSS,
    lat_us: [pick(0.5), pick(0.99), pick(1)],
    errors,
  }) + "\n",
);
