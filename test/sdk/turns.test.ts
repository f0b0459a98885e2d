import { Agentline, onTurn, type PushOutcome, type Turn, unwrap } from "@agentline/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { startTestService, type TestService } from "../support/service.js";

// The SDK's onTurn against the real sandbox: answers the service no longer wants (409 when the
// caller spoke again, 410 when the call ended) come back as "discarded", never as errors.
let service: TestService;
let agentline: Agentline;

beforeAll(async () => {
  // No filler line while a test holds a turn open.
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
  const account = await createAccount(service.core);
  agentline = new Agentline({ baseUrl: service.baseUrl, apiKey: account.apiKey });
});
afterAll(() => service?.stop());

async function eventually<T>(check: () => Promise<T> | T, what: string, ms = 20_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A gate a turn handler waits at until the test opens it. */
function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/**
 * An agent with a number whose relay answers each turn with `answer`; every discard and every
 * error the relay reports is recorded.
 */
async function agentAnswering(answer: (turn: Turn) => Promise<string>) {
  const agent = unwrap(await agentline.api.POST("/v1/agents", { body: { name: "Discards" } }));
  unwrap(await agentline.api.POST("/v1/numbers", { body: { agent_id: agent.agent_id } }));
  const discards: Array<{ text: string; outcome: PushOutcome; aborted: boolean }> = [];
  const errors: unknown[] = [];
  const connection = agentline.relay(
    agent.agent_id,
    onTurn(answer, { onDiscard: (turn, outcome) => discards.push({ text: turn.text, outcome, aborted: turn.signal.aborted }) }),
    { onError: (error) => errors.push(error) },
  );
  await connection.ready;
  const call = unwrap(await agentline.api.POST("/v1/calls", { body: { agent_id: agent.agent_id, to_number: "+14155550142" } }));
  const callPath = { params: { path: { call_id: call.call_id } } };
  return {
    connection,
    discards,
    errors,
    callPath,
    say: async (text: string) => unwrap(await agentline.api.POST("/v1/sandbox/calls/{call_id}/say", { ...callPath, body: { text } })),
    transcript: async () => unwrap(await agentline.api.GET("/v1/calls/{call_id}/transcript", callPath)).map((l) => `${l.role}: ${l.text}`),
  };
}

describe("onTurn", () => {
  it("treats 409 (the caller spoke again) as a discard: no error, the stale answer never spoken", { timeout: 60_000 }, async () => {
    const firstHeld = gate();
    const started: string[] = [];
    const agent = await agentAnswering(async (turn) => {
      started.push(turn.text);
      // The first turn ignores its signal on purpose, so its answer does reach the service, late.
      if (turn.text === "first") await firstHeld.opened;
      return `answer to ${turn.text}`;
    });
    try {
      await agent.say("first");
      await eventually(() => started.includes("first"), "the first turn handed");
      await agent.say("second");
      await eventually(async () => (await agent.transcript()).includes("assistant: answer to second"), "the answer to the second turn");
      firstHeld.open();
      await eventually(() => agent.discards.length === 1, "the late answer discarded");

      expect(agent.discards).toEqual([{ text: "first", outcome: { status: "discarded", httpStatus: 409, code: "turn_stale" }, aborted: true }]);
      expect(agent.errors).toEqual([]);
      expect(await agent.transcript()).toEqual(["user: first", "user: second", "assistant: answer to second"]);
    } finally {
      await agent.connection.close();
    }
  });

  it("treats 410 (the call ended) as a discard, and an interim line after it is not sent", { timeout: 60_000 }, async () => {
    const held = gate();
    const interimAfter: PushOutcome[] = [];
    const agent = await agentAnswering(async (turn) => {
      await held.opened;
      const outcome = await turn.interim("Let me check.");
      // Discarded once: later lines of the same turn are discarded without a request.
      interimAfter.push(await turn.interim("Still checking."));
      return outcome.status === "spoken" ? "too late" : "never pushed";
    });
    try {
      await agent.say("hello?");
      unwrap(await agentline.api.POST("/v1/calls/{call_id}/hangup", agent.callPath));
      held.open();
      await eventually(() => agent.discards.length === 1 && interimAfter.length === 1, "the answer discarded");

      expect(agent.discards).toEqual([{ text: "hello?", outcome: { status: "discarded", httpStatus: 410, code: expect.any(String) }, aborted: true }]);
      expect(interimAfter).toEqual([agent.discards[0]!.outcome]);
      expect(agent.errors).toEqual([]);
      expect(await agent.transcript()).toEqual(["user: hello?"]);
    } finally {
      await agent.connection.close();
    }
  });
});
