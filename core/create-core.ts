import type { PGlite } from "@electric-sql/pglite";
import { listenForRevocations } from "./auth/revocation.js";
import { BillingJobs } from "./billing/billing-jobs.js";
import { type Bus, createLocalBus } from "./bus.js";
import { createPostgresBus } from "./bus-postgres.js";
import { LiveCallEngine } from "./calls/call-engine.js";
import { loadCallById } from "./calls/call-records.js";
import { endCall } from "./calls/end-call.js";
import type { Carrier } from "./carrier/carrier.js";
import { CARRIERS } from "./carrier/carriers.js";
import type { Config } from "./config.js";
import type { Core } from "./context.js";
import { openDatabase } from "./db/database.js";
import { newId } from "./ids.js";
import type { Logger } from "./logger.js";
import { createMailer, type Mailer } from "./mail/mailer.js";
import { createMetrics } from "./metrics.js";
import { loadServerSecrets, type ServerSecrets } from "./secrets.js";
import { DeliveryWorker } from "./webhooks/worker.js";

export interface CreateCoreOptions {
  logger: Logger;
  /** A ready PGlite instead of opening DATA_DIR (tests). */
  pglite?: PGlite;
  mailer?: Mailer;
  /** Run the background jobs (webhook deliveries, billing) in this process (default true). */
  runJobs?: boolean;
}

/** Opens the database (migrating it), loads the server secret and wires the core services. */
export async function createCore(config: Config, options: CreateCoreOptions): Promise<Core> {
  const { logger } = options;
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    pglite: options.pglite,
    logger,
    deadlineMs: config.requestDeadlineMs,
  });
  let secrets: ServerSecrets;
  let bus: Bus;
  const processId = newId("sess");
  try {
    secrets = await loadServerSecrets(database.db, config.secretKey);
    bus = database.postgresClient ? await createPostgresBus({ client: database.postgresClient, db: database.db, logger, processId }) : createLocalBus(logger);
  } catch (error) {
    await database.close();
    throw error;
  }
  const mailer = options.mailer ?? createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, logger });
  let carrier: Carrier;
  try {
    carrier = await CARRIERS[config.carrier].create(config, { db: database.db, bus, logger });
  } catch (error) {
    await bus.close();
    await database.close();
    throw error;
  }
  const stopping = new AbortController();
  const core: Core = {
    config,
    db: database.db,
    dbHandle: database,
    logger,
    mailer,
    secrets,
    metrics: createMetrics(database.db),
    bus,
    carrier,
    callEngine: undefined as unknown as LiveCallEngine,
    webhooks: undefined as unknown as DeliveryWorker,
    billing: undefined as unknown as BillingJobs,
    baseUrl: config.baseUrl ?? `http://localhost:${config.port}`,
    processId,
    now: () => new Date(),
    stopping: stopping.signal,
    beginStopping: () => stopping.abort(),
    async close() {
      stopping.abort();
      await core.billing.close();
      await core.webhooks.close();
      core.callEngine.close();
      await carrier.close();
      await bus.close();
      mailer.close();
      await database.close();
    },
  };
  core.callEngine = new LiveCallEngine(core);
  // Before any request: a revocation heard from now on ends what its credential opened.
  listenForRevocations(core);
  carrier.start(core.callEngine);
  core.webhooks = new DeliveryWorker(core);
  core.billing = new BillingJobs(core, async (callId, at) => {
    const call = await loadCallById(core.db, callId);
    if (call) await endCall(core, call, "service", at);
  });
  if (options.runJobs !== false) {
    core.webhooks.start();
    core.billing.start();
  }
  return core;
}
