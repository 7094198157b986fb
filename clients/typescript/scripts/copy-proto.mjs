// Copies the contract (protos/verdict/**) into dist/proto, where the client loads it at run time.
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
