import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Config } from "../core/config.js";
import type { Core } from "../core/context.js";
import { type CreateCoreOptions, createCore } from "../core/create-core.js";
import { createApp } from "./app.js";
import { capConnectionsPerAddress } from "./connection-cap.js";
import { assertPortFree } from "./port-check.js";
import { allRoutes } from "./routes/all-routes.js";
import { AccountSockets } from "./ws/account-sockets.js";
import { carrierSocketRoutes } from "./ws/carrier-sockets.js";
import { relayRoute } from "./ws/relay.js";
import { attachUpgrades } from "./ws/upgrades.js";

/** A listening service. */
export interface RunningServer {
  core: Core;
  server: Server;
  /** The public base URL (BASE_URL, or the local address when unset). */
  baseUrl: string;
  port: number;
  /** Stops accepting, lets in-flight requests finish (up to the grace period), closes the database. */
  close(): Promise<void>;
}

const SHUTDOWN_GRACE_MS = 10_000;

/** Opens the core, mounts every route and listens on HOST:PORT. */
export async function startServer(config: Config, options: CreateCoreOptions): Promise<RunningServer> {
  await assertPortFree(config.port, config.host);
  const core = await createCore(config, options);
  const app = createApp(core, allRoutes(config));
  const server = createServer(app);
  capConnectionsPerAddress(server, config.limits.ipConnections, core.logger);
  // The sockets a client opens (the relay, the sandbox's softphone) share its account's ACCOUNT_MAX_SOCKETS.
  const accountSockets = new AccountSockets(config.limits.accountSockets);
  // Then whatever sockets the carrier declares: the sandbox's softphone, or Twilio's ConversationRelay.
  const sockets = [relayRoute(core, accountSockets), ...carrierSocketRoutes(core, accountSockets)];
  attachUpgrades(server, sockets, core.logger);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(config.port, config.host, () => resolve());
    });
  } catch (error) {
    await core.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const baseUrl = config.baseUrl ?? `http://${config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host}:${port}`;
  app.locals.baseUrl = baseUrl;
  core.baseUrl = baseUrl;
  core.logger.info({ port, base_url: baseUrl, database: core.dbHandle.kind, carrier: config.carrier }, "listening");

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // Long-polls in flight answer now (with what they have), so draining does not wait them out.
      core.beginStopping();
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      // Upgraded sockets are no longer the HTTP server's to close.
      sockets.forEach((route) => route.close());
      // Keep-alive connections go idle as their last response finishes; close each as it does.
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await drained;
      clearInterval(sweep);
      clearTimeout(timer);
      await core.close();
      core.logger.info("stopped");
    })());
  return { core, server, baseUrl, port, close };
}
