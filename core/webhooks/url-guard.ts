import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";

// Addresses a webhook must never reach: this machine, private networks, link-local (cloud
// metadata at 169.254.169.254), carrier-grade NAT, multicast and reserved space.
const blocked = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 4], ["240.0.0.0", 4],
] as const) blocked.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of [["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["64:ff9b::", 96]] as const) blocked.addSubnet(net, prefix, "ipv6");

/** How to lift the guard, for the messages that refuse a target: a setting of the server, for development. */
const DEVELOPMENT_ONLY = "a server started with ALLOW_PRIVATE_WEBHOOKS=1, for development,";

/**
 * True for an address a webhook may not target, and for anything that is no IP address.
 * BlockList judges an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, `::ffff:a00:1`) by the IPv4
 * rules itself.
 */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? "ipv4" : "ipv6");
}

/**
 * Why a webhook URL is refused at configuration time, or null. The resolved address is checked
 * again at every delivery (a name can be re-pointed after it was accepted).
 */
export function webhookUrlProblem(raw: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  if (url.username || url.password) return "must not carry credentials";
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) {
    return url.protocol === "http:" ? `must be an https:// URL (${DEVELOPMENT_ONLY} allows http://)` : "must be an https:// URL";
  }
  if (allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost") || (isIP(host) !== 0 && isPrivateAddress(host))) {
    return `must not point at a private, loopback or link-local address (${DEVELOPMENT_ONLY} allows them)`;
  }
  return null;
}

/**
 * A DNS lookup for outgoing deliveries that refuses private addresses. The connection is made to
 * the very address checked, so the name cannot be re-resolved elsewhere in between.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "", 0);
      const list = addresses as unknown as LookupAddress[];
      const usable = allowPrivate ? list : list.filter((a) => !isPrivateAddress(a.address));
      if (usable.length === 0) {
        return callback(Object.assign(new Error(`${hostname} resolves only to private addresses (${DEVELOPMENT_ONLY} allows them)`), { code: "EPRIVATE" }), "", 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
