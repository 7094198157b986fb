/**
 * Plain JSON values <-> google.protobuf.Struct in the object form proto-loader uses, so callers pass `context`
 * and read `details` as ordinary objects.
 */
import type { Struct, Struct__Output } from "./generated/google/protobuf/Struct";
import type { Value, Value__Output } from "./generated/google/protobuf/Value";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export function toStruct(object: JsonObject): Struct {
  const fields: Record<string, Value> = {};
  for (const [key, value] of Object.entries(object)) {
    if (value !== undefined) fields[key] = toValue(value);
  }
  return { fields };
}

export function toValue(value: JsonValue): Value {
  if (value === null) return { nullValue: "NULL_VALUE" };
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number") return { numberValue: value };
  if (typeof value === "string") return { stringValue: value };
  if (Array.isArray(value)) return { listValue: { values: value.map(toValue) } };
  if (typeof value === "object") return { structValue: toStruct(value) };
  throw new TypeError(`not a JSON value: ${typeof value}`);
}

export function fromStruct(struct: Struct__Output | null | undefined): JsonObject {
  const object: JsonObject = {};
  for (const [key, value] of Object.entries(struct?.fields ?? {})) object[key] = fromValue(value);
  return object;
}

export function fromValue(value: Value__Output): JsonValue {
  switch (value.kind) {
    case "boolValue":
      return value.boolValue ?? false;
    case "numberValue":
      return value.numberValue ?? 0;
    case "stringValue":
      return value.stringValue ?? "";
    case "listValue":
      return (value.listValue?.values ?? []).map(fromValue);
    case "structValue":
      return fromStruct(value.structValue);
    default:
      return null;
  }
}
