import type { CarrierKind } from "../carrier-kind.js";

/**
 * Twilio, the production carrier. Its module, and the SDK with it, is loaded only when it is
 * chosen: a sandbox start never needs them. loadConfig requires its settings and BASE_URL with
 * CARRIER=twilio (every URL Twilio is given starts with it).
 */
export const twilioKind: CarrierKind = {
  async create(config, deps) {
    const { TwilioCarrier } = await import("./twilio-carrier.js");
    return new TwilioCarrier({
      config: config.twilio!,
      baseUrl: config.baseUrl!,
      ...deps,
      recordingNotice: config.recordingNotice,
      transferTimeoutMs: config.transferTimeoutMs,
    });
  },
  async check(config) {
    const { checkTwilio } = await import("./carrier-check.js");
    return checkTwilio(config.twilio!, config.baseUrl!);
  },
  offersFarParty: false,
};
