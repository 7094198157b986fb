/**
 * The contract checks guard what they claim: buf breaking passes on the current proto against the released
 * snapshot and fails on a proto with a removed field; the generated types are fresh.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { REPO_ROOT } from "./server";

const PACKAGE_ROOT = join(REPO_ROOT, "clients", "typescript");
const BUF = join(PACKAGE_ROOT, "node_modules", ".bin", "buf");
const RELEASED = join(REPO_ROOT, "protos", "released", "verdict-v1.binpb");

function buf(cwd: string, ...args: string[]) {
  return spawnSync(BUF, args, { cwd, encoding: "utf8" });
}

describe("contract hygiene", () => {
  const scratch = mkdtempSync(join(tmpdir(), "verdict-contract-"));
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it("the current proto is compatible with the released contract", () => {
    const result = buf(join(REPO_ROOT, "protos"), "breaking", "--against", RELEASED);
    assert.equal(result.status, 0, result.stdout + result.stderr);
  });

  it("buf breaking rejects a removed field", () => {
    const copy = join(scratch, "protos");
    cpSync(join(REPO_ROOT, "protos"), copy, { recursive: true });
    const proto = join(copy, "verdict", "v1", "verdict.proto");
    const text = readFileSync(proto, "utf8");
    const edited = text.replace(/^\s*string finish_reason = 2;\n/m, "\n");
    assert.notEqual(edited, text, "the test edit must apply");
    writeFileSync(proto, edited);
    const result = buf(copy, "breaking", "--against", RELEASED);
    assert.notEqual(result.status, 0);
    assert.match(result.stdout + result.stderr, /finish_reason/);
  });

  it("the generated TypeScript types match the proto", () => {
    const result = spawnSync(process.execPath, [join(PACKAGE_ROOT, "scripts", "gen-types.mjs"), "--check"], {
      encoding: "utf8",
    });
    assert.equal(result.status, 0, result.stdout + result.stderr);
  });
});
