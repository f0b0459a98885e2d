import { afterEach } from "vitest";
import { liveStandIns } from "../../../harness/twilio/live-stand-ins.js";

// A setup file of every test file: the test during which the service sent Twilio a request that
// breaks Twilio's OpenAPI fails itself, even one that expects the resulting 502 (the stand-in
// answers such a request 400, which the adapter reports as Twilio unavailable). Each stand-in's
// expectValid() still checks the whole file when it stops, for requests made outside any test.
afterEach(() => {
  const found = [...liveStandIns].flatMap((standIn) => standIn.takeNewViolations());
  if (found.length > 0) throw new Error(`requests to Twilio that do not match its OpenAPI:\n${found.join("\n")}`);
});
