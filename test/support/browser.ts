import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

/** Debian's Chromium (`.ci/run` installs the `chromium` package when it is missing). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Where tests leave screenshots (git ignores it). */
export const ARTIFACTS = join(import.meta.dirname, "..", "..", "test-artifacts");

const isLoopback = (url: string) => {
  const { protocol, hostname } = new URL(url);
  if (protocol === "data:" || protocol === "blob:" || protocol === "about:") return true;
  return hostname === "127.0.0.1" || hostname === "localhost" || hostname === "[::1]";
};

/**
 * Headless Chromium with a fresh profile and its background networking off. Every request the
 * pages make is recorded; one that would leave this machine is refused and listed in `offMachine`.
 */
export async function launchBrowser(): Promise<{ context: BrowserContext; offMachine: string[]; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "agentline-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const offMachine: string[] = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (isLoopback(url)) return route.continue();
    offMachine.push(url);
    return route.abort();
  });
  return {
    context,
    offMachine,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
