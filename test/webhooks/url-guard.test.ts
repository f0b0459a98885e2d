import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { guardedLookup, isPrivateAddress } from "../../core/net/address-guard.js";
import { webhookUrlProblem } from "../../core/webhooks/url-guard.js";

const DEV = "a server started with ALLOW_PRIVATE_WEBHOOKS=1, for development,";

describe("isPrivateAddress", () => {
  it.each([
    "10.0.0.0",
    "10.255.255.255",
    "127.0.0.1",
    "169.254.169.254",
    "172.16.0.0",
    "172.31.255.255",
    "192.168.1.1",
    "100.64.0.0",
    "100.127.255.255",
    "::1",
    "::",
    "fd00::1",
    "fe80::1",
  ])("blocks %s", (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(["8.8.8.8", "9.255.255.255", "11.0.0.0", "172.15.255.255", "172.32.0.0", "100.63.255.255", "100.128.0.0", "2001:4860:4860::8888"])(
    "lets %s through",
    (address) => {
      expect(isPrivateAddress(address)).toBe(false);
    },
  );

  it("judges an IPv4-mapped IPv6 address as its IPv4 address", () => {
    expect(isPrivateAddress("::ffff:10.0.0.1")).toBe(true);
    expect(isPrivateAddress("::FFFF:127.0.0.1")).toBe(true);
    expect(isPrivateAddress("::ffff:8.8.8.8")).toBe(false);
    expect(isPrivateAddress("::FFFF:8.8.8.8")).toBe(false);
    expect(isPrivateAddress("::ffff:93.184.216.34")).toBe(false);
  });

  it("judges the hex form of a mapped address as its IPv4 address too, and an address that merely ends like one as IPv6", () => {
    // The URL parser writes [::ffff:10.0.0.1] as [::ffff:a00:1].
    expect(isPrivateAddress("::ffff:a00:1")).toBe(true);
    expect(isPrivateAddress("::ffff:808:808")).toBe(false);
    // Not mapped: the IPv4 at the end of these says nothing of them.
    expect(isPrivateAddress("1::ffff:10.0.0.1")).toBe(false);
    expect(isPrivateAddress("fe80::ffff:8.8.8.8")).toBe(true);
  });

  it.each([
    "not-an-ip",
    "example.com",
    "",
    "x::ffff:8.8.8.8",
    "::ffff:8.8.8.8x",
    "::ffff:x.8.8.8",
    "::ffff:8.x.8.8",
    "::ffff:8.8.x.8",
    "::ffff:8.8.8.x",
    "::ffff:256.0.0.1",
    "::ffff:010.0.0.1",
    "::ffff:8.8.8.08",
  ])("treats %j, which is no IP address, as private", (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });
});

describe("webhookUrlProblem", () => {
  it("accepts a public https URL", () => {
    expect(webhookUrlProblem("https://example.com/hook", false)).toBeNull();
    expect(webhookUrlProblem("https://93.184.216.34/hook", false)).toBeNull();
  });

  it("refuses a string that is no absolute URL", () => {
    expect(webhookUrlProblem("/hook", false)).toBe("must be an absolute URL");
  });

  it.each(["https://user@example.com/hook", "https://:secret@example.com/hook", "https://user:secret@example.com/hook"])("refuses credentials in %s", (url) => {
    expect(webhookUrlProblem(url, false)).toBe("must not carry credentials");
    expect(webhookUrlProblem(url, true)).toBe("must not carry credentials");
  });

  it("refuses http:// unless private targets are allowed, and says how to allow it", () => {
    expect(webhookUrlProblem("http://example.com/hook", false)).toBe(`must be an https:// URL (${DEV} allows http://)`);
    expect(webhookUrlProblem("http://example.com/hook", true)).toBeNull();
  });

  it("refuses any other scheme with the plain message, even when private targets are allowed", () => {
    expect(webhookUrlProblem("ftp://example.com/hook", false)).toBe("must be an https:// URL");
    expect(webhookUrlProblem("ftp://example.com/hook", true)).toBe("must be an https:// URL");
  });

  const privateProblem = `must not point at a private, loopback or link-local address (${DEV} allows them)`;
  it.each([
    "https://localhost/hook",
    "https://a.localhost/hook",
    "https://127.0.0.1/hook",
    "https://[::1]/hook",
    "https://[::ffff:10.0.0.1]/hook",
    "https://169.254.169.254/",
  ])("refuses %s", (url) => {
    expect(webhookUrlProblem(url, false)).toBe(privateProblem);
    expect(webhookUrlProblem(url, true)).toBeNull();
  });

  it("accepts names that merely contain localhost, and public IPv6 literals", () => {
    expect(webhookUrlProblem("https://localhost.example.com/hook", false)).toBeNull();
    expect(webhookUrlProblem("https://mylocalhost/hook", false)).toBeNull();
    expect(webhookUrlProblem("https://[2001:4860:4860::8888]/hook", false)).toBeNull();
  });
});

type Answer = { error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number };
function lookup(allowPrivate: boolean, hostname: string, options: { all?: boolean }): Promise<Answer> {
  return new Promise((resolve) => {
    guardedLookup(allowPrivate)(
      hostname,
      options as any,
      ((error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => resolve({ error, address, family })) as any,
    );
  });
}

describe("guardedLookup", () => {
  it("refuses a name that resolves only to private addresses, with code EPRIVATE", async () => {
    const answer = await lookup(false, "localhost", {});
    expect(answer.error?.code).toBe("EPRIVATE");
    expect(answer.error?.message).toBe(`localhost resolves only to private addresses (${DEV} allows them)`);
    expect(answer.address).toBe("");
    expect(answer.family).toBe(0);
  });

  it("resolves a private name when private targets are allowed, as one address or as a list", async () => {
    const one = await lookup(true, "localhost", {});
    expect(one.error).toBeNull();
    expect(one.address).toMatch(/^(127\.0\.0\.1|::1)$/);
    expect(one.family).toBe(one.address === "::1" ? 6 : 4);
    const all = await lookup(true, "localhost", { all: true });
    expect(all.error).toBeNull();
    expect(Array.isArray(all.address)).toBe(true);
    expect((all.address as LookupAddress[]).map((a) => a.address)).toContain(one.address);
  });

  it("passes a public address through, as one address or as a list", async () => {
    expect(await lookup(false, "8.8.8.8", {})).toEqual({ error: null, address: "8.8.8.8", family: 4 });
    expect(await lookup(false, "8.8.8.8", { all: true })).toEqual({ error: null, address: [{ address: "8.8.8.8", family: 4 }], family: undefined });
  });

  it("hands on a resolver failure as it is", async () => {
    const answer = await lookup(false, "no-such-host.invalid", {});
    expect(answer.error).toBeInstanceOf(Error);
    expect(answer.error?.code).not.toBe("EPRIVATE");
    expect(answer.address).toBe("");
    expect(answer.family).toBe(0);
  });
});
