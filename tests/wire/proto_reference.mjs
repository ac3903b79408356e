// Our bridge to the TypeScript reference protobuf binding, for tests/wire/test_proto_parity.py.
// Usage: node proto_reference.mjs CACHE_DIR < request.json
//   {"encode": [event, ...]}    -> {"frames": [base64 of one length-prefixed frame, ...]}
//   {"decode": [base64, ...]}   -> {"events": [event | {"error": name, "message": text}, ...]}
// CACHE_DIR holds node_modules/@ag-ui/encoder and @ag-ui/proto (1.0.0).
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(join(process.argv[2], "package.json"));
const { EventEncoder } = require("@ag-ui/encoder");
const proto = require("@ag-ui/proto");
process.env.SUPPRESS_TRANSFORMATION_WARNINGS = "1";
console.warn = () => {};

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const request = JSON.parse(input);
  const out = {};
  if (request.encode) {
    const encoder = new EventEncoder({ accept: proto.AGUI_MEDIA_TYPE });
    out.frames = request.encode.map((event) => {
      try {
        return Buffer.from(encoder.encodeBinary(event)).toString("base64");
      } catch (err) {
        return { error: err.name, message: String(err.message) };
      }
    });
  }
  if (request.decode) {
    out.events = request.decode.map((b64) => {
      const frame = Buffer.from(b64, "base64");
      const length = frame.readUInt32BE(0);
      try {
        return proto.decode(new Uint8Array(frame.subarray(4, 4 + length)));
      } catch (err) {
        return { error: err.name, message: String(err.message) };
      }
    });
  }
  process.stdout.write(JSON.stringify(out));
});
