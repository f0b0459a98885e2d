// Runs before `npm start`, `npm test`, `npm run admin` and `npm run bench` so that each works on a
// fresh clone by itself: installs the locked dependencies when node_modules is missing or older
// than package-lock.json.
// Plain Node, no dependencies: it runs before there are any.
import { execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";

const marker = "node_modules/.package-lock.json";
const stale = !existsSync(marker) || statSync("package-lock.json").mtimeMs > statSync(marker).mtimeMs;
if (stale) {
  process.stderr.write("agentline: installing dependencies (npm ci)...\n");
  // npm's output goes to stderr: stdout belongs to the command that follows (an API key, say).
  execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=warn"], { stdio: ["ignore", 2, 2] });
}
