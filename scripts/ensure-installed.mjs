// Runs before `npm start`, `npm test`, `npm run admin` and `npm run bench` so that each works on a
// fresh clone by itself: installs the locked dependencies when node_modules is missing or was
// installed from another package-lock.json.
// Plain Node, no dependencies: it runs before there are any.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";

const marker = "node_modules/.package-lock.json";
// The digest of the lock file node_modules was checked against. By content, not file times: a copy
// of the project (Stryker's sandbox, which links the same node_modules) has a newer lock file of
// the same content, and reinstalling there would empty the node_modules every copy shares.
const stamp = "node_modules/.agentline-lock-sha256";
const lock = createHash("sha256").update(readFileSync("package-lock.json")).digest("hex");
const stale = !existsSync(marker)
  ? true
  : existsSync(stamp)
    ? readFileSync(stamp, "utf8") !== lock
    : // node_modules from a plain `npm ci`: older than the lock file means installed from an older one.
      statSync("package-lock.json").mtimeMs > statSync(marker).mtimeMs;
if (stale) {
  process.stderr.write("agentline: installing dependencies (npm ci)...\n");
  // npm's output goes to stderr: stdout belongs to the command that follows (an API key, say).
  execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=warn"], { stdio: ["ignore", 2, 2] });
}
writeFileSync(stamp, lock);
