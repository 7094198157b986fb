/** Tool-calling turns through the Node client against a real Verdict server: typed calls, and provider JSON. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { VerdictClient, VerdictRpcError } from "../src/index";
import { type RunningServer, startServer } from "./server";

const weather = {
  name: "get_weather",
  description: "Get current temperature for a given location.",
  parameters: {
    type: "object",
    properties: { location: { type: "string" }, units: { type: "string", enum: ["celsius", "fahrenheit"] } },
    required: ["location", "units"],
    additionalProperties: false,
  },
  strict: true,
};

describe("VerdictClient on tool-calling turns", () => {
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

  it("checks each typed call against its tool's schema", async () => {
    const result = await client.verifyResponse({
      finishReason: "tool_calls",
      toolCalls: [
        { id: "call_1", name: "get_weather", arguments: '{"location": "Paris", "units": "celsius"}' },
        { id: "call_2", name: "get_weather", arguments: { location: "Oslo" } },
      ],
      tools: [weather],
    });
    assert.equal(result.verdict, "malformed");
    assert.deepEqual(
      result.toolChecks.map((check) => [check.callIndex, check.id, check.verdict, check.reason]),
      [
        [0, "call_1", "ok", ""],
        [1, "call_2", "malformed", "missing_argument"],
      ],
    );
    assert.equal(result.toolChecks[1]?.schemaDigest.length, 64);
  });

  it("takes an OpenAI response and tools array straight through", async () => {
    const completion = {
      id: "chatcmpl-1",
      object: "chat.completion",
      choices: [
        {
          index: 0,
          finish_reason: "length",
          message: {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"location": "Par' } }],
          },
        },
      ],
      usage: { completion_tokens: 12 },
    };
    const result = await client.verifyResponse({ messageJson: completion, toolsJson: [{ type: "function", function: weather }] });
    assert.equal(result.verdict, "truncated");
    assert.deepEqual(result.toolChecks.map((check) => check.reason), ["truncated"]);
  });

  it("refuses the typed and JSON forms mixed, naming the field", async () => {
    await assert.rejects(
      client.verifyResponse({ text: "hi", messageJson: { role: "assistant", content: "hi" } }),
      (error: unknown) => error instanceof VerdictRpcError && error.fieldViolations.some((v) => v.field === "text"),
    );
  });
});
