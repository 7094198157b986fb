// Regenerates the TypeScript types of the Verdict contract into src/generated/ (never edit those files by hand).
//
// `node scripts/gen-types.mjs` writes them; `--check` regenerates into a scratch folder and fails on any
// difference, so a proto change without regenerated types cannot land. The flags here must match LOADER_OPTIONS
// in src/contract.ts: the types describe the objects proto-loader builds with those options.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const packageRoot = join(here, "..");
const protoRoot = join(packageRoot, "..", "..", "protos");
const committed = join(packageRoot, "src", "generated");

function generate(outDir) {
  const bin = join(packageRoot, "node_modules", ".bin", "proto-loader-gen-types");
  execFileSync(
    bin,
    [
      "verdict/v1/verdict.proto",
      "--longs=String",
      "--enums=String",
      "--defaults",
      "--oneofs",
      "--includeComments",
      "--grpcLib=@grpc/grpc-js",
      `--outDir=${outDir}`,
      "--includeDirs=.",
    ],
    // Run from the proto root with a relative include, so no absolute path of this checkout lands in the output.
    { cwd: protoRoot, stdio: ["ignore", "ignore", "inherit"] },
  );
}

function files(root) {
  const found = new Map();
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else found.set(relative(root, path), readFileSync(path, "utf8"));
    }
  };
  walk(root);
  return found;
}

if (process.argv.includes("--check")) {
  const scratch = mkdtempSync(join(tmpdir(), "verdict-ts-gen-"));
  try {
    generate(scratch);
    const fresh = files(scratch);
    const current = files(committed);
    const stale = [...fresh.keys()].filter((name) => current.get(name) !== fresh.get(name));
    const extra = [...current.keys()].filter((name) => !fresh.has(name));
    if (stale.length || extra.length) {
      console.error(`generated TypeScript types are stale: ${[...stale, ...extra].join(", ")}; run \`npm run gen\` and commit`);
      process.exit(1);
    }
    console.log("generated TypeScript types match the proto");
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
} else {
  rmSync(committed, { recursive: true, force: true });
  generate(committed);
  console.log(`generated ${files(committed).size} files into src/generated`);
}
