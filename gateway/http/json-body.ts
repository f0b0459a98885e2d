import express, { type RequestHandler } from "express";
import { AppError } from "../../core/errors.js";

export const MAX_BODY_BYTES = 1024 * 1024;
const JSON_TYPES = ["application/json", "application/*+json"];

/** Parses JSON bodies up to 1 MiB; a body of another content type is a 415, not silently ignored. */
export function jsonBody(): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    const hasBody = Number(req.get("content-length") ?? 0) > 0 || req.get("transfer-encoding") !== undefined;
    if (hasBody && !req.is(JSON_TYPES)) {
      next(new AppError("unsupported_media_type", "Send the body as JSON with 'Content-Type: application/json'."));
      return;
    }
    next();
  };
  // The exact bytes are kept: a payment may be bound to a digest of them.
  const keepRaw = (req: object, _res: unknown, buf: Buffer) => void ((req as { rawBody?: Buffer }).rawBody = buf);
  return [requireJson, express.json({ limit: MAX_BODY_BYTES, type: JSON_TYPES, strict: true, verify: keepRaw })];
}
