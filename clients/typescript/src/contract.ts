/**
 * The Verdict contract, loaded at run time from the .proto by @grpc/proto-loader.
 *
 * Why runtime loading: it needs no protoc and no code generator at build time, and the generated files under
 * src/generated/ are types only (proto-loader-gen-types), checked for freshness in `make test`. The loader options
 * below must match the flags in scripts/gen-types.mjs, since the types describe the objects these options build.
 */
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { ProtoGrpcType } from "./generated/verdict";

export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** Where the build put the proto tree (dist/proto, next to dist/src). */
export const PROTO_ROOT = join(__dirname, "..", "proto");

export const SERVICE_NAME = "verdict.v1.VerdictService";

let loaded: ProtoGrpcType | undefined;

/** The loaded contract; parsed once per process. */
export function contract(): ProtoGrpcType {
  if (loaded === undefined) {
    const definition = protoLoader.loadSync("verdict/v1/verdict.proto", { ...LOADER_OPTIONS, includeDirs: [PROTO_ROOT] });
    loaded = grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType;
  }
  return loaded;
}
