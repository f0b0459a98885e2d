import type { Logger } from "../../logger.js";
import { CarrierRefusal, type NumberRequest } from "../carrier.js";
import { isNotFoundAtTwilio, mayHaveGoneThrough, type TwilioClient, twilioRequest } from "./rest.js";

/** The webhooks a number of the service points at, as IncomingPhoneNumbers takes them. */
export interface NumberWebhooks {
  voiceUrl: string;
  smsUrl: string;
  statusCallback: string;
}

function configuration(urls: NumberWebhooks) {
  return {
    voiceUrl: urls.voiceUrl,
    voiceMethod: "POST",
    smsUrl: urls.smsUrl,
    smsMethod: "POST",
    statusCallback: urls.statusCallback,
    statusCallbackMethod: "POST",
  };
}

// Twilio's AreaCode filter covers the North American numbering plan only.
const AREA_CODE_COUNTRIES = new Set(["US", "CA"]);
const CANDIDATES = 20;

/** Numbers Twilio offers for the request, voice-capable. */
async function search(client: TwilioClient, request: NumberRequest): Promise<string[]> {
  if (request.areaCode && !AREA_CODE_COUNTRIES.has(request.country)) {
    throw new CarrierRefusal("unsupported", `area_code is only offered for US and CA numbers, not ${request.country}`, "area_code");
  }
  const country = client.availablePhoneNumbers(request.country);
  const filter = { voiceEnabled: true, limit: CANDIDATES, ...(request.areaCode ? { areaCode: Number(request.areaCode) } : {}) };
  const list = async (): Promise<Array<{ phoneNumber: string }>> => {
    if (request.numberType === "toll_free") return country.tollFree.list(filter);
    if (request.numberType === "mobile") return country.mobile.list(filter);
    return country.local.list(filter);
  };
  try {
    const found = await twilioRequest("the number search", list);
    return found.map((n) => n.phoneNumber);
  } catch (error) {
    if (isNotFoundAtTwilio(error)) throw new CarrierRefusal("unsupported", `Twilio offers no ${request.numberType} numbers in ${request.country}`, "country");
    throw error;
  }
}

/**
 * Buys a number matching the request with its webhooks pointing at the service. A candidate
 * someone else bought meanwhile (or that the service held before) is skipped for the next one.
 */
export async function buyTwilioNumber(
  client: TwilioClient,
  request: NumberRequest,
  urls: NumberWebhooks,
  isTaken: (n: string) => Promise<boolean>,
  logger: Logger,
) {
  for (const phoneNumber of await search(client, request)) {
    if (await isTaken(phoneNumber)) continue;
    try {
      const bought = await twilioRequest("the number purchase", () => client.incomingPhoneNumbers.create({ phoneNumber, ...configuration(urls) }), {
        number: "area_code",
      });
      return { phoneNumber: bought.phoneNumber, carrierRef: bought.sid };
    } catch (error) {
      if (error instanceof CarrierRefusal && error.reason === "number_unavailable") continue;
      if (mayHaveGoneThrough(error)) await handBackUnanswered(client, phoneNumber, logger);
      throw error;
    }
  }
  const where = request.areaCode ? ` in area code ${request.areaCode}` : "";
  throw new CarrierRefusal(
    "no_numbers_available",
    `Twilio has no ${request.numberType} number${where} in ${request.country} available now; try another area code`,
  );
}

/**
 * A purchase that timed out or failed may still have gone through at Twilio (its answer was
 * lost), and Twilio bills the month at once: if the number is in the account now, it is deleted
 * again, so the client's 502 means nothing was bought. If Twilio cannot even be asked, the
 * operator is told which number to check by hand.
 */
async function handBackUnanswered(client: TwilioClient, phoneNumber: string, logger: Logger): Promise<void> {
  try {
    const held = await twilioRequest("the number lookup", () => client.incomingPhoneNumbers.list({ phoneNumber, limit: 1 }));
    for (const number of held) await releaseTwilioNumber(client, number.sid);
    if (held.length > 0)
      logger.warn(
        { phone_number: phoneNumber, number_sid: held[0]!.sid },
        "a Twilio purchase whose answer was lost had gone through; the number was deleted again",
      );
  } catch (error) {
    logger.error(
      { err: error, phone_number: phoneNumber },
      "a Twilio purchase failed without an answer and the account could not be checked; if the number is in the Twilio account, release it there",
    );
  }
}

/** Takes over a number already in the Twilio account: points its webhooks at the service. */
export async function attachTwilioNumber(client: TwilioClient, phoneNumber: string, urls: NumberWebhooks) {
  const [held] = await twilioRequest("the number lookup", () => client.incomingPhoneNumbers.list({ phoneNumber, limit: 1 }));
  if (!held) throw new CarrierRefusal("invalid_number", `${phoneNumber} is not a number of the service's Twilio account; buy it there first`, "phone_number");
  await twilioRequest("the number configuration", () => client.incomingPhoneNumbers(held.sid).update(configuration(urls)), { number: "phone_number" });
  return { carrierRef: held.sid };
}

/** Deletes the number from the Twilio account (permanent); one already gone is fine. */
export async function releaseTwilioNumber(client: TwilioClient, carrierRef: string | null): Promise<void> {
  // A number recorded under another carrier (a sandbox ref) has nothing to release at Twilio.
  if (!carrierRef?.startsWith("PN")) return;
  try {
    await twilioRequest("the number release", () => client.incomingPhoneNumbers(carrierRef).remove());
  } catch (error) {
    if (!isNotFoundAtTwilio(error)) throw error;
  }
}
