import express, { type Express } from "express";
import type { Core } from "../core/context.js";
import { carrierWebhooks } from "./http/carrier-webhooks.js";
import { requestDeadline } from "./http/deadline.js";
import { problemHandler, routeNotFound } from "./http/problem.js";
import { requestContext } from "./http/request-context.js";
import { routeHandler, type Route } from "./http/route.js";

/** The express application: request ids and logs, the routes (each parsing its own body), problem responses. */
export function createApp(core: Core, routes: Route[]): Express {
  const app = express();
  app.disable("x-powered-by");
  // Live state, read fresh: no ETag, which hashed every body and sent it as a second write (docs/decisions.md).
  app.set("etag", false);
  app.set("trust proxy", core.config.trustProxy);
  app.locals.baseUrl = core.config.baseUrl;
  app.use(requestContext(core.logger, core.metrics));
  app.use(requestDeadline(core.config.requestDeadlineMs, core.logger));
  app.use(routeHandler(routes, core));
  app.use(carrierWebhooks(core));
  app.use(routeNotFound(routes));
  app.use(problemHandler(core.logger));
  return app;
}
