/** The Node client sends the new Evaluate members (promptfoo, openai_grader, trajectory) and the provider facts. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { VerdictClient } from "../src/index";
import { usesJudge } from "../src/client";
import { type RunningServer, startServer } from "./server";

const OPENAI_CALL = {
  id: "call_1",
  type: "function" as const,
  function: { name: "get_weather", arguments: '{"city":"Paris"}' },
};

describe("the new Evaluate members against a real server", () => {
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

  it("runs a promptfoo assert list with the provider facts", async () => {
    const promptfoo = JSON.stringify([
      { type: "finish-reason", value: "stop" },
      { type: "latency", threshold: 500 },
      { type: "cost", threshold: 0.01 },
      { type: "tool-call-f1", value: ["get_weather"] },
      { type: "is-valid-openai-tools-call" },
    ]);
    const result = await client.evaluate({
      config: { promptfoo },
      toolCalls: [OPENAI_CALL],
      finishReason: "stop",
      latencyMs: 120,
      cost: 0.001,
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
    });
    assert.equal(result.verdict, "yes", JSON.stringify(result.details));
  });

  it("runs an OpenAI grader reading the item namespace", async () => {
    const grader = { type: "string_check", name: "g", input: "{{sample.output_text}}", reference: "{{item.answer}}", operation: "eq" };
    const result = await client.evaluate({
      config: { openaiGrader: JSON.stringify(grader) },
      output: "Paris",
      context: { item: { answer: "Paris" } },
    });
    assert.equal(result.verdict, "yes");
    assert.equal(result.details.reward, 1);
  });

  it("runs a typed trajectory", async () => {
    const config = { trajectory: { expected: [{ name: "get_weather", arguments: '{"city": "Paris"}' }], match: "exact" } };
    assert.equal((await client.evaluate({ config, toolCalls: [OPENAI_CALL] })).verdict, "yes");
    const other = { name: "get_weather", arguments: { city: "Rome" } };
    assert.equal((await client.evaluate({ config, toolCalls: [other] })).verdict, "no");
  });

  it("gives model graders the judge deadline", () => {
    assert.equal(usesJudge({ openaiGrader: '{"type": "score_model"}' }), true);
    assert.equal(usesJudge({ openaiGrader: '{"type": "string_check"}' }), false);
  });
});
