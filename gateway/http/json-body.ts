import express, { type RequestHandler } from "express";
import { AppError } from "../../core/errors.js";
import { jsonOverLimits, overLimits } from "../../core/schemas/json-limits.js";

export const MAX_BODY_BYTES = 1024 * 1024;
const JSON_TYPES = ["application/json", "application/*+json"];

/**
 * Parses JSON bodies up to 1 MiB; a body of another content type is a 415, not silently ignored.
 * Before the parse, the bytes are scanned once: a body over the JSON limits (core/schemas/
 * json-limits.ts: nesting, and arrays and objects in all) is a 400, never built. JSON is UTF-8
 * (RFC 8259), which is what the scan reads; another charset is a 415.
 */
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
  const verify = (req: object, _res: unknown, buf: Buffer, encoding: string) => {
    if (encoding !== "utf-8") throw new AppError("unsupported_media_type", "Send the JSON body in UTF-8 (charset=utf-8, or no charset).");
    const over = jsonOverLimits(buf);
    if (over) throw overLimits("The request body", over);
    (req as { rawBody?: Buffer }).rawBody = buf;
  };
  return [requireJson, express.json({ limit: MAX_BODY_BYTES, type: JSON_TYPES, strict: true, verify })];
}
