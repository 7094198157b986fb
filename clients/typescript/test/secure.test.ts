/** The Node client over TLS with a bearer token, against a real server with auth on; certificates made now. */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { VerdictClient, VerdictRpcError } from "../src/index";
import { type RunningServer, startServer } from "./server";

const TOKEN = "node-client-token-0123456789abcdef";

function openssl(cwd: string, ...args: string[]): void {
  execFileSync("openssl", args, { cwd, stdio: "ignore" });
}

/** A CA and a server certificate for localhost / 127.0.0.1, valid one day. */
function makeCertificates(dir: string): { ca: string; cert: string; key: string } {
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  openssl(dir, "req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=node-test-ca", "-days", "1",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
  openssl(dir, "req", "-new", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost");
  writeFileSync(join(dir, "server.ext"), "basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n");
  openssl(dir, "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-set_serial", "2",
    "-out", "server.crt", "-days", "1", "-extfile", "server.ext");
  openssl(dir, "req", "-new", ...ec, "-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=node-client");
  writeFileSync(join(dir, "client.ext"), "basicConstraints=CA:FALSE\nsubjectAltName=URI:spiffe://verdict.test/node\n");
  openssl(dir, "x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-set_serial", "3",
    "-out", "client.crt", "-days", "1", "-extfile", "client.ext");
  return { ca: join(dir, "ca.crt"), cert: join(dir, "server.crt"), key: join(dir, "server.key") };
}

describe("VerdictClient with TLS and a bearer token", () => {
  let dir: string;
  let server: RunningServer;
  let ca: Buffer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "verdict-node-tls-"));
    const files = makeCertificates(dir);
    ca = readFileSync(files.ca);
    mkdirSync(join(dir, "tokens"));
    writeFileSync(join(dir, "tokens", "node"), `${TOKEN}\n`);
    writeFileSync(join(dir, "policy.yaml"), "principals:\n  node:\n    rpcs: [VerifyResponse, ListEvaluators]\n");
    server = await startServer(60_000, [
      "--tls-cert-file", files.cert,
      "--tls-key-file", files.key,
      "--auth-policy-file", join(dir, "policy.yaml"),
      "--auth-tokens-dir", join(dir, "tokens"),
    ]);
  });

  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("calls over TLS with the token", async () => {
    const client = new VerdictClient(server.target, {
      tls: { rootCertificates: ca, serverNameOverride: "localhost" },
      bearerToken: TOKEN,
      retry: { maxAttempts: 1 },
    });
    try {
      const result = await client.verifyResponse({ text: "```json\n{}\n```\n", finishReason: "stop" });
      assert.equal(result.verdict, "ok");
      const catalogue = await client.listEvaluators();
      assert.ok(catalogue.evaluators.length > 0);
      await assert.rejects(
        client.evaluate({ config: { exitCode: {} }, exitCode: 1 }),
        (error: unknown) =>
          error instanceof VerdictRpcError &&
          error.code === grpc.status.PERMISSION_DENIED &&
          error.reason === "RPC_NOT_ALLOWED",
      );
    } finally {
      client.close();
    }
  });

  it("is UNAUTHENTICATED without the token or with a wrong one", async () => {
    for (const bearerToken of [undefined, `${TOKEN}x`]) {
      const client = new VerdictClient(server.target, {
        tls: { rootCertificates: ca, serverNameOverride: "localhost" },
        bearerToken,
        retry: { maxAttempts: 1 },
      });
      try {
        await assert.rejects(
          client.verifyResponse({ text: "hi" }),
          (error: unknown) => error instanceof VerdictRpcError && error.code === grpc.status.UNAUTHENTICATED,
        );
      } finally {
        client.close();
      }
    }
  });

  it("cannot reach a TLS server in plaintext", async () => {
    const client = new VerdictClient(server.target, { bearerToken: TOKEN, retry: { maxAttempts: 1 } });
    try {
      await assert.rejects(
        client.verifyResponse({ text: "hi" }, { timeoutMs: 5_000 }),
        (error: unknown) => error instanceof VerdictRpcError && error.code !== grpc.status.OK,
      );
    } finally {
      client.close();
    }
  });

  it("refuses a token that is not one line", () => {
    assert.throws(() => new VerdictClient(server.target, { bearerToken: "a\nb" }), TypeError);
  });
});

describe("VerdictClient with mutual TLS", () => {
  let dir: string;
  let server: RunningServer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "verdict-node-mtls-"));
    const files = makeCertificates(dir);
    writeFileSync(
      join(dir, "policy.yaml"),
      "principals:\n  node:\n    rpcs: [VerifyResponse]\n    certificates: [spiffe://verdict.test/node]\n",
    );
    server = await startServer(60_000, [
      "--tls-cert-file", files.cert,
      "--tls-key-file", files.key,
      "--tls-client-ca-file", files.ca,
      "--tls-client-auth", "require",
      "--auth-policy-file", join(dir, "policy.yaml"),
    ]);
  });

  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("authenticates with the client certificate's SPIFFE ID", async () => {
    const client = new VerdictClient(server.target, {
      tls: {
        rootCertificates: readFileSync(join(dir, "ca.crt")),
        privateKey: readFileSync(join(dir, "client.key")),
        certificateChain: readFileSync(join(dir, "client.crt")),
        serverNameOverride: "localhost",
      },
      retry: { maxAttempts: 1 },
    });
    try {
      const result = await client.verifyResponse({ text: "```json\n{}\n```\n", finishReason: "stop" });
      assert.equal(result.verdict, "ok");
      await assert.rejects(
        client.listEvaluators(),
        (error: unknown) => error instanceof VerdictRpcError && error.reason === "RPC_NOT_ALLOWED",
      );
    } finally {
      client.close();
    }
  });

  it("cannot connect without a client certificate", async () => {
    const client = new VerdictClient(server.target, {
      tls: { rootCertificates: readFileSync(join(dir, "ca.crt")), serverNameOverride: "localhost" },
      retry: { maxAttempts: 1 },
    });
    try {
      await assert.rejects(
        client.verifyResponse({ text: "hi" }, { timeoutMs: 5_000 }),
        (error: unknown) => error instanceof VerdictRpcError && error.code === grpc.status.UNAVAILABLE,
      );
    } finally {
      client.close();
    }
  });
});
