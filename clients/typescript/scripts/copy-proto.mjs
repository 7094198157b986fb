// Copies the contract (protos/verdict/**, and the google/rpc/status.proto it imports) into dist/proto, where the client loads it at run time.
// The repository's protos/ stays the single source: nothing under clients/typescript holds a copy in git.
import { cpSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
const target = join(packageRoot, "dist", "proto");
rmSync(target, { recursive: true, force: true });
cpSync(join(packageRoot, "..", "..", "protos", "verdict"), join(target, "verdict"), {
  recursive: true,
  filter: (source) => !source.includes("released"),
});
// google.rpc.Status (the per-item error of batch results), imported by the contract.
cpSync(join(packageRoot, "..", "..", "protos", "google"), join(target, "google"), { recursive: true });
