import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";

// Addresses an outgoing request of the service must never reach: this machine, private
// networks, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT, multicast and
// reserved space; in IPv6 also the forms that carry an IPv4 address (IPv4-compatible, NAT64,
// 6to4), which could smuggle any of the above.
const blocked = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  blocked.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of [
  ["::", 96],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  ["2002::", 16],
] as const)
  blocked.addSubnet(net, prefix, "ipv6");

/** How to lift the guard, for the messages that refuse a target: a setting of the server, for development. */
export const DEVELOPMENT_ONLY = "a server started with ALLOW_PRIVATE_WEBHOOKS=1, for development,";

/**
 * True for an address an outgoing request may not target, and for anything that is no IP
 * address. BlockList judges an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, `::ffff:a00:1`) by
 * the IPv4 rules itself.
 */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? "ipv4" : "ipv6");
}

/**
 * Why the service may not send a request to this URL, or null: the scheme (https://; http:// too
 * when private targets are allowed), no credentials, and a host that is neither a localhost name
 * nor a private IP literal. The URL parser has already turned the other spellings of an IPv4
 * address (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`) into the dotted form checked here. A
 * name is checked again as it resolves (guardedLookup), at every request.
 */
export function outgoingUrlProblem(url: URL, allowPrivate: boolean): string | null {
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
 * A DNS lookup for outgoing requests that refuses private addresses. The connection is made to
 * the very address checked, so the name cannot be re-resolved elsewhere in between. Node never
 * calls it for an IP literal: outgoingUrlProblem checks those.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "", 0);
      const list = addresses as unknown as LookupAddress[];
      const usable = allowPrivate ? list : list.filter((a) => !isPrivateAddress(a.address));
      if (usable.length === 0) {
        return callback(
          Object.assign(new Error(`${hostname} resolves only to private addresses (${DEVELOPMENT_ONLY} allows them)`), { code: "EPRIVATE" }),
          "",
          0,
        );
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
