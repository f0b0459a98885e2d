import express, { type Router } from "express";
import type { Core } from "../../core/context.js";
import { servingRequest } from "./deadline.js";

/**
 * The active carrier's webhooks (Twilio's voice, status and messaging callbacks), and nothing for
 * a carrier that declares none. They are the carrier's, not the API's: form-encoded, signed by
 * the carrier, answered in its terms (TwiML), so they are not in /openapi.json. A failure the
 * carrier adapter throws (a bad signature: 403) becomes the usual problem response.
 */
export function carrierWebhooks(core: Core): Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: "64kb" });
  for (const webhook of core.carrier.endpoints?.webhooks ?? []) {
    router.post(webhook.path, form, async (req, res, next) => {
      try {
        const answer = await servingRequest(req, res, () =>
          webhook.handle({ url: req.originalUrl, headers: req.headers, form: (req.body ?? {}) as Record<string, string | string[]> }),
        );
        if (res.headersSent) return;
        res.status(answer.status);
        if (answer.contentType) res.type(answer.contentType);
        res.end(answer.body ?? "");
      } catch (error) {
        next(error);
      }
    });
  }
  return router;
}
