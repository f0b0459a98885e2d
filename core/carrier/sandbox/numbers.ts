import { randomInt } from "node:crypto";
import { CarrierRefusal, type NumberRequest } from "../carrier.js";

/**
 * The sandbox's numbers come only from ranges reserved for fiction, so no real phone is ever
 * named: North America's 555-0100..0199, and the UK regulator's drama ranges.
 */
const NANP_DEFAULT_AREA_CODES = ["415", "212", "312", "206", "512", "617", "303", "404", "213", "305", "702", "503", "615", "720", "646", "929"];
const NANP_TOLL_FREE = ["800", "833", "844", "855", "866", "877", "888"];
const GB_LOCAL: Record<string, string> = { "20": "+442079460", "113": "+441134960", "131": "+441314960", "161": "+441614960" };

/** A block of fictional numbers: a prefix and how many digits vary after it. */
interface Block {
  prefix: string;
  digits: number;
}

function nanpBlock(request: NumberRequest): Block {
  const { areaCode, numberType } = request;
  if (numberType === "toll_free") {
    if (areaCode && !NANP_TOLL_FREE.includes(areaCode)) {
      throw new CarrierRefusal("unsupported", `area_code ${areaCode} is not a toll-free code; use one of ${NANP_TOLL_FREE.join(", ")}`, "area_code");
    }
    return { prefix: `+1${areaCode ?? pick(NANP_TOLL_FREE)}55501`, digits: 2 };
  }
  if (areaCode && (!/^[2-9]\d\d$/.test(areaCode) || NANP_TOLL_FREE.includes(areaCode) || /^[2-9]11$/.test(areaCode))) {
    throw new CarrierRefusal("unsupported", `area_code ${areaCode} is not a geographic North American area code`, "area_code");
  }
  return { prefix: `+1${areaCode ?? pick(NANP_DEFAULT_AREA_CODES)}55501`, digits: 2 };
}

function gbBlock(request: NumberRequest): Block {
  const { areaCode, numberType } = request;
  if (numberType === "mobile") return { prefix: "+447700900", digits: 3 };
  if (numberType === "toll_free") return { prefix: "+448081570", digits: 3 };
  const code = areaCode ?? "20";
  const prefix = GB_LOCAL[code];
  if (!prefix) throw new CarrierRefusal("unsupported", `area_code ${code} is not offered in GB; use one of ${Object.keys(GB_LOCAL).join(", ")}`, "area_code");
  return { prefix, digits: 3 };
}

/** Countries the sandbox sells numbers in. */
export const SANDBOX_COUNTRIES = ["US", "CA", "GB"] as const;

/** The fictional block a request draws from, or a CarrierRefusal for what the sandbox does not offer. */
export function sandboxBlock(request: NumberRequest): Block {
  switch (request.country) {
    case "US":
    case "CA":
      return nanpBlock(request);
    case "GB":
      return gbBlock(request);
    default:
      throw new CarrierRefusal("unsupported", `the sandbox carrier offers numbers in ${SANDBOX_COUNTRIES.join(", ")}, not ${request.country}`, "country");
  }
}

/** Every number of a block, in random order. */
export function shuffledNumbers(block: Block): string[] {
  const all = Array.from({ length: 10 ** block.digits }, (_, i) => block.prefix + String(i).padStart(block.digits, "0"));
  for (let i = all.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  return all;
}

function pick<T>(items: readonly T[]): T {
  return items[randomInt(items.length)]!;
}
