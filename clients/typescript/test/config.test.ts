/** Defaults and validation of the channel configuration, and the retry policy on the wire. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { channelOptions, serviceConfig, VerdictClient, VerdictRpcError } from "../src/index";
import { contract } from "../src/contract";
import { evaluatorConfig, usesJudge } from "../src/client";

describe("channel configuration", () => {
  it("balances round_robin and retries UNAVAILABLE by default", () => {
    assert.deepEqual(serviceConfig(), {
      loadBalancingConfig: [{ round_robin: {} }],
      methodConfig: [
        {
          name: [{ service: "verdict.v1.VerdictService" }],
          retryPolicy: {
            maxAttempts: 4,
            initialBackoff: "0.2s",
            maxBackoff: "5s",
            backoffMultiplier: 2,
            retryableStatusCodes: ["UNAVAILABLE"],
          },
        },
      ],
    });
  });

  it("drops the retry policy when maxAttempts is 1 and rejects impossible values", () => {
    assert.equal(serviceConfig({ retry: { maxAttempts: 1 } }).methodConfig, undefined);
    assert.throws(() => serviceConfig({ retry: { maxAttempts: 6 } }), RangeError);
    assert.throws(() => channelOptions({ keepalive: { timeMs: 1000 } }), RangeError);
    assert.throws(() => new VerdictClient("127.0.0.1:1", { timeoutMs: 0 }), RangeError);
  });

  it("keeps keepalive inside server defaults and sets message limits both ways", () => {
    const options = channelOptions();
    assert.equal(options["grpc.keepalive_time_ms"], 300_000);
    assert.equal(options["grpc.keepalive_permit_without_calls"], 0);
    assert.equal(options["grpc.max_send_message_length"], 4 * 1024 * 1024);
    assert.equal(options["grpc.max_receive_message_length"], 4 * 1024 * 1024);
    assert.equal(channelOptions({ channelOptions: { "grpc.keepalive_time_ms": 600_000 } })["grpc.keepalive_time_ms"], 600_000);
  });

  it("gives judge-backed evaluations the longer deadline", () => {
    assert.equal(usesJudge(evaluatorConfig({ llmStructured: {} })), true);
    assert.equal(usesJudge(evaluatorConfig({ type: "comparator", baseline: "x" })), true);
    assert.equal(usesJudge(evaluatorConfig("type: exit_code")), true);
    assert.equal(usesJudge(evaluatorConfig({ exitCode: {} })), false);
    assert.equal(usesJudge(evaluatorConfig({ type: "action_stall" })), false);
  });
});

describe("retries and deadlines against a misbehaving server", () => {
  let server: grpc.Server;
  let port: number;
  let attempts = 0;

  before(async () => {
    server = new grpc.Server();
    server.addService(contract().verdict.v1.VerdictService.service, {
      VerifyResponse: (_call: unknown, done: grpc.sendUnaryData<object>) => {
        attempts += 1;
        if (attempts <= 2) done({ code: grpc.status.UNAVAILABLE, details: `attempt ${attempts} refused` });
        else done(null, { verdict: "VERIFY_VERDICT_OK" });
      },
      Evaluate: () => {
        attempts += 1; // never answers: only the caller's deadline ends the call
      },
      ListEvaluators: (_call: unknown, done: grpc.sendUnaryData<object>) => done({ code: grpc.status.UNIMPLEMENTED }),
    });
    port = await new Promise((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
  });

  after(() => server.forceShutdown());

  it("succeeds on the third attempt", async () => {
    attempts = 0;
    const client = new VerdictClient(`127.0.0.1:${port}`, { retry: { initialBackoffMs: 10, maxBackoffMs: 50 } });
    const result = await client.verifyResponse({ text: "x" });
    client.close();
    assert.equal(result.verdict, "ok");
    assert.equal(attempts, 3);
  });

  it("ends a call the server never answers at the deadline, without retrying it", async () => {
    attempts = 0;
    const client = new VerdictClient(`127.0.0.1:${port}`);
    const failure = await client.evaluate({ config: { exitCode: {} } }, { timeoutMs: 200 }).catch((error: unknown) => error);
    client.close();
    assert.ok(failure instanceof VerdictRpcError);
    assert.equal(failure.codeName, "DEADLINE_EXCEEDED");
    assert.equal(failure.reason, "");
    assert.equal(attempts, 1);
  });

  it("gives up after one attempt when retries are off", async () => {
    attempts = 0;
    const client = new VerdictClient(`127.0.0.1:${port}`, { retry: { maxAttempts: 1 } });
    const failure = await client.verifyResponse({ text: "x" }).catch((error: unknown) => error);
    client.close();
    assert.ok(failure instanceof VerdictRpcError);
    assert.equal(failure.codeName, "UNAVAILABLE");
    assert.equal(attempts, 1);
  });
});
