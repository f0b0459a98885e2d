import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
const lines: any[] = [];

beforeAll(async () => {
  // No SMTP_URL: the mailer writes to the log.
  const logger = createLogger(
    "info",
    new Writable({
      write: (chunk, _e, done) => (
        lines.push(
          ...String(chunk)
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l)),
        ),
        done()
      ),
    }),
  );
  service = await startTestService({ logger });
});
afterAll(() => service?.stop());

describe("sign-in codes with no mail server", () => {
  it("answers that the code was logged, not sent, and the logged code signs in", async () => {
    const api = new Api(service.baseUrl);
    const requested = await api.post("/v1/auth/otp", { email: "dev@example.com" });
    expect(requested.status).toBe(200);
    expect(requested.body).toEqual({
      status: "logged",
      email: "dev@example.com",
      expires_in_seconds: 600,
      detail: "No mail server is configured (SMTP_URL): the code was written to the server log.",
    });
    const mail = lines.find((l) => l.msg?.startsWith("mail not sent") && l.to === "dev@example.com");
    const otp = /sign-in code is (\d{6})/.exec(mail.text)![1];
    expect((await api.post("/v1/auth/verify", { email: "dev@example.com", otp })).status).toBe(200);
  });

  it("documents both answers", async () => {
    const schema = (await new Api(service.baseUrl).get("/openapi.json")).body.components.schemas.OtpRequestResult;
    expect(schema.properties.status.enum).toEqual(["sent", "logged"]);
  });
});
