import type { Route } from "../http/route.js";
import { agentRoutes } from "./agents.js";
import { authRoutes } from "./auth.js";
import { discoveryRoutes } from "./discovery.js";

/** Every route the gateway mounts, in one list: the app serves them and /openapi.json describes them. */
export function allRoutes(): Route[] {
  const routes: Route[] = [];
  routes.push(...discoveryRoutes(() => routes), ...authRoutes, ...agentRoutes);
  return routes;
}
