import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { seal, unseal } from "../../core/auth/sealed.js";

// Sealed secrets (core/auth/sealed.ts): what a stored paid answer keeps of a credential it
// returned. The database must never hold the secret in the clear, a value sealed under one server
// secret opens under no other, and any change to the stored text is refused. That a replayed
// payment gets the sealed credential back is in test/hostile/agent-tokens.test.ts.

/** Server secrets whose keys come from `master`, each label its own (as core/secrets.ts). */
function secrets(master: string) {
  const labels: string[] = [];
  return {
    labels,
    secrets: {
      derive(label: string) {
        labels.push(label);
        return createHash("sha256").update(`${master}:${label}`).digest();
      },
    },
  };
}

const TOKEN = "agt_live_0123456789abcdefghijklmnopqrstuv";

describe("seal", () => {
  it("keeps no trace of the secret, under the stored-answer key", () => {
    const core = secrets("one");
    const sealed = seal(core, TOKEN);
    expect(sealed.startsWith("sealed:v1:")).toBe(true);
    expect(sealed).not.toContain(TOKEN);
    expect(Buffer.from(sealed.slice("sealed:v1:".length), "base64url").toString("latin1")).not.toContain("agt_live");
    expect(core.labels).toEqual(["stored-answer-secrets"]);
  });

  it("is iv, tag and ciphertext: 12 + 16 bytes more than the secret", () => {
    const bytes = Buffer.from(seal(secrets("one"), TOKEN).slice("sealed:v1:".length), "base64url");
    expect(bytes.length).toBe(12 + 16 + Buffer.byteLength(TOKEN));
  });

  it("seals one secret differently each time (a fresh iv)", () => {
    const core = secrets("one");
    const a = seal(core, TOKEN);
    const b = seal(core, TOKEN);
    expect(a).not.toBe(b);
    expect(a.slice(10, 26)).not.toBe(b.slice(10, 26));
  });
});

describe("unseal", () => {
  it("gives the secret back, any characters included", () => {
    const core = secrets("one");
    expect(unseal(core, seal(core, TOKEN))).toBe(TOKEN);
    const unusual = "ключ 🔑 \u0000 end";
    expect(unseal(core, seal(core, unusual))).toBe(unusual);
    expect(unseal(core, seal(core, ""))).toBe("");
  });

  it("returns a value that was never sealed as it is", () => {
    const core = secrets("one");
    expect(unseal(core, TOKEN)).toBe(TOKEN);
    expect(unseal(core, "sealed:v2:abc")).toBe("sealed:v2:abc");
    expect(core.labels).toEqual([]);
  });

  it("refuses a value sealed under another server secret", () => {
    const sealed = seal(secrets("one"), TOKEN);
    expect(() => unseal(secrets("two"), sealed)).toThrow();
  });

  it("refuses a changed ciphertext, tag or iv", () => {
    const core = secrets("one");
    const sealed = seal(core, TOKEN);
    const bytes = Buffer.from(sealed.slice("sealed:v1:".length), "base64url");
    for (const at of [0, 11, 12, 27, 28, bytes.length - 1]) {
      const changed = Buffer.from(bytes);
      changed[at] = changed[at]! ^ 1;
      expect(() => unseal(core, `sealed:v1:${changed.toString("base64url")}`), `byte ${at}`).toThrow();
    }
    expect(() => unseal(core, `sealed:v1:${bytes.subarray(0, bytes.length - 1).toString("base64url")}`)).toThrow();
  });
});
