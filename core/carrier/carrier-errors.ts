import { AppError } from "../errors.js";
import { CarrierRefusal, CarrierUnavailable } from "./carrier.js";

/**
 * What a carrier failure means to the client: a refusal it can act on is a 4xx naming the field
 * at fault, a carrier that cannot be used right now a 502; anything else is passed on as it is.
 */
export function carrierFailure(error: unknown, defaultField: string): unknown {
  if (error instanceof CarrierUnavailable) {
    return new AppError("carrier_unavailable", `The telephone carrier is unavailable: ${error.message}. Nothing was charged or changed; try again shortly.`, {
      cause: error,
    });
  }
  if (!(error instanceof CarrierRefusal)) return error;
  switch (error.reason) {
    case "no_numbers_available":
      return new AppError("no_numbers_available", error.message);
    case "number_unavailable":
      return new AppError("number_unavailable", error.message);
    case "recipient_opted_out":
      return new AppError("recipient_opted_out", `The recipient has opted out of texts from this number: ${error.message}. Nothing was charged.`);
    default: {
      const field = error.field ?? defaultField;
      return new AppError("validation_error", `The request cannot be served: ${error.message}.`, { errors: [{ field, message: error.message }] });
    }
  }
}
