import express, { type Express } from "express";
import type { Core } from "../core/context.js";
import { carrierWebhooks } from "./http/carrier-webhooks.js";
import { requestDeadline } from "./http/deadline.js";
import { problemHandler, routeNotFound } from "./http/problem.js";
import { requestContext } from "./http/request-context.js";
import type { Route } from "./http/route.js";
import { inSequence, routeHandler } from "./http/router.js";
import { oauthServer } from "./oauth/mount.js";

/** The express application: request ids and logs, the routes (each parsing its own body), problem responses. */
export function createApp(core: Core, routes: Route[]): Express {
  const app = express();
  app.disable("x-powered-by");
  // Live state, read fresh: no ETag, which hashed every body and sent it as a second write (docs/decisions/0063-http-fast-path.md).
  app.set("etag", false);
  app.set("trust proxy", core.config.trustProxy);
  app.locals.baseUrl = core.config.baseUrl;
  // One layer of express's router, not three: each layer it walks parses the URL again and
  // matches it, a cost every request paid (docs/decisions/0063-http-fast-path.md).
  const serveRoutes = routeHandler(routes, core);
  app.use(
    Object.assign(inSequence([requestContext(core.logger, core.metrics), requestDeadline(core.config.requestDeadlineMs, core.logger), serveRoutes]), {
      groups: serveRoutes.groups,
    }),
  );
  app.use(carrierWebhooks(core));
  // The OAuth authorization server for /mcp: its endpoints, metadata and sign-in pages.
  app.use(oauthServer(core));
  app.use(routeNotFound(routes));
  app.use(problemHandler(core.logger));
  return app;
}
