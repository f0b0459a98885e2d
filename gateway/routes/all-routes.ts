import { CARRIERS } from "../../core/carrier/carriers.js";
import type { Config } from "../../core/config.js";
import type { Route } from "../http/route.js";
import { agentRoutes } from "./agents.js";
import { authRoutes } from "./auth.js";
import { billingRoutes } from "./billing.js";
import { callRoutes } from "./calls.js";
import { discoveryRoutes } from "./discovery.js";
import { docsRoutes } from "./docs.js";
import { eventRoutes } from "./events.js";
import { feedbackRoutes } from "./feedback.js";
import { mcpRoutes } from "./mcp.js";
import { messageRoutes } from "./messages.js";
import { metricsRoutes } from "./metrics.js";
import { numberRoutes } from "./numbers.js";
import { oauthRoutes } from "./oauth.js";
import { sandboxRoutes } from "./sandbox.js";
import { topupRoutes } from "./topup.js";
import { voiceRoutes } from "./voices.js";
import { webhookRoutes } from "./webhooks.js";
import { x402Routes } from "./x402.js";

/** Every route the gateway mounts, in one list: the app serves them and /openapi.json describes them. */
export function allRoutes(config: Pick<Config, "carrier"> & Partial<Pick<Config, "payments">>): Route[] {
  const routes: Route[] = [];
  routes.push(
    ...discoveryRoutes(() => routes),
    ...docsRoutes,
    ...authRoutes,
    ...agentRoutes,
    ...numberRoutes,
    ...callRoutes,
    ...eventRoutes,
    ...webhookRoutes,
    ...messageRoutes,
    ...voiceRoutes,
    ...feedbackRoutes,
    ...billingRoutes,
    ...topupRoutes(config.payments),
    ...x402Routes,
    ...mcpRoutes,
    ...oauthRoutes,
    ...metricsRoutes,
  );
  // The far party's routes, with a carrier whose far party the client plays (the sandbox).
  if (CARRIERS[config.carrier].offersFarParty) routes.push(...sandboxRoutes);
  return routes;
}
