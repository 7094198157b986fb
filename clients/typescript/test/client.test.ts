/** The Node client against a real Verdict server started by this test. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { VerdictClient, VerdictRpcError } from "../src/index";
import { type RunningServer, startServer } from "./server";

describe("VerdictClient against a real server", () => {
  let server: RunningServer;
  let client: VerdictClient;

  before(async () => {
    server = await startServer();
    client = new VerdictClient(server.target);
  });

  after(async () => {
    client?.close();
    await server?.stop();
  });

  it("verifies a completion with a parsing block", async () => {
    const result = await client.verifyResponse({ text: "```python\nprint('hi')\n```\n", finishReason: "stop" });
    assert.equal(result.verdict, "ok");
    assert.equal(result.failed, false);
    assert.deepEqual(
      result.checks.map((check) => [check.blockIndex, check.language, check.verdict]),
      [[0, "python", "ok"]],
    );
  });

  it("reports a truncated and a malformed completion as failed", async () => {
    const truncated = await client.verifyResponse({ text: "The answer is", finishReason: "length" });
    assert.equal(truncated.verdict, "truncated");
    assert.equal(truncated.failed, true);
    const malformed = await client.verifyResponse({ text: "```json\n{\"a\": }\n```\n", finishReason: "stop" });
    assert.equal(malformed.verdict, "malformed");
    assert.equal(malformed.checks[0]?.language, "json");
  });

  it("evaluates with a typed config", async () => {
    const config = { exitCode: {} };
    assert.equal((await client.evaluate({ config, exitCode: 0 })).verdict, "yes");
    assert.equal((await client.evaluate({ config, exitCode: 1 })).verdict, "no");
  });

  it("evaluates an evaluate block and returns plain details", async () => {
    const result = await client.evaluate({ config: { type: "output_numeric", operator: "ge", target: 3 }, output: "5" });
    assert.equal(result.verdict, "yes");
    assert.equal(result.details.value, 5);
  });

  it("round-trips the action_stall state token: yes, then no with max_repeat 1", async () => {
    const config = { actionStall: { maxRepeat: 1 } };
    const context = { context: { action: "run the tests" } };
    const first = await client.evaluate({ config, context });
    assert.equal(first.verdict, "yes");
    assert.ok(first.state.length > 0, "a stateful evaluator returns a state token");
    const second = await client.evaluate({ config, context, state: first.state });
    assert.equal(second.verdict, "no");
    const fresh = await client.evaluate({ config, context });
    assert.equal(fresh.verdict, "yes", "without the token the server starts over");
  });

  it("lists the evaluator catalogue", async () => {
    const { evaluators } = await client.listEvaluators();
    const types = evaluators.map((info) => info.type);
    assert.deepEqual(types, [...types].sort());
    for (const type of ["exit_code", "action_stall", "llm_structured"]) assert.ok(types.includes(type), type);
    const stall = evaluators.find((info) => info.type === "action_stall");
    assert.equal(stall?.stateful, true);
  });

  it("decodes ErrorInfo and BadRequest from an invalid config", async () => {
    const failure = await client
      .evaluate({ config: { type: "output_numeric", operator: "about", target: 1 }, output: "1" })
      .then(() => assert.fail("an invalid config must be rejected"))
      .catch((error: unknown) => error);
    assert.ok(failure instanceof VerdictRpcError);
    assert.equal(failure.codeName, "INVALID_ARGUMENT");
    assert.equal(failure.reason, "INVALID_EVALUATOR_CONFIG");
    assert.equal(failure.domain, "verdict.v1");
    assert.ok(failure.field?.includes("operator"), `field ${failure.field}`);
    assert.equal(failure.metadata.field, failure.field);
    assert.match(failure.message, /^INVALID_ARGUMENT \[INVALID_EVALUATOR_CONFIG\]: /);
  });

  it("cancels a call through an AbortSignal", async () => {
    const controller = new AbortController();
    controller.abort();
    const failure = await client.listEvaluators({ signal: controller.signal }).catch((error: unknown) => error);
    assert.ok(failure instanceof VerdictRpcError);
    assert.equal(failure.codeName, "CANCELLED");
  });
});
