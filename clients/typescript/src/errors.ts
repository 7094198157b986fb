/**
 * One error type for every failed call, carrying the server's structured error (AIP-193): the status code, the
 * ErrorInfo reason/domain/metadata and the BadRequest field violations, decoded from the
 * `grpc-status-details-bin` trailer (a serialized google.rpc.Status). Branch on `code` and `reason`, never on
 * the message text.
 */
import * as grpc from "@grpc/grpc-js";
import * as protobuf from "protobufjs";

/** The google.rpc messages needed (Status, ErrorInfo, BadRequest, RetryInfo with a Duration declared beside it), declared inline instead of shipping googleapis protos. */
const rpcTypes = protobuf.Root.fromJSON({
  nested: {
    google: {
      nested: {
        protobuf: { nested: { Any: { fields: { typeUrl: { type: "string", id: 1 }, value: { type: "bytes", id: 2 } } } } },
        rpc: {
          nested: {
            Status: {
              fields: {
                code: { type: "int32", id: 1 },
                message: { type: "string", id: 2 },
                details: { rule: "repeated", type: "google.protobuf.Any", id: 3 },
              },
            },
            ErrorInfo: {
              fields: {
                reason: { type: "string", id: 1 },
                domain: { type: "string", id: 2 },
                // map<string, string> on the wire is exactly a repeated key/value entry message.
                metadata: { rule: "repeated", type: "MetadataEntry", id: 3 },
              },
              nested: {
                MetadataEntry: { fields: { key: { type: "string", id: 1 }, value: { type: "string", id: 2 } } },
              },
            },
            RetryInfo: { fields: { retryDelay: { type: "Duration", id: 1 } } },
            Duration: { fields: { seconds: { type: "int64", id: 1 }, nanos: { type: "int32", id: 2 } } },
            BadRequest: {
              fields: { fieldViolations: { rule: "repeated", type: "FieldViolation", id: 1 } },
              nested: {
                FieldViolation: { fields: { field: { type: "string", id: 1 }, description: { type: "string", id: 2 } } },
              },
            },
          },
        },
      },
    },
  },
});
const StatusType = rpcTypes.lookupType("google.rpc.Status");
const ErrorInfoType = rpcTypes.lookupType("google.rpc.ErrorInfo");
const BadRequestType = rpcTypes.lookupType("google.rpc.BadRequest");
const RetryInfoType = rpcTypes.lookupType("google.rpc.RetryInfo");
const RETRY_INFO_URL = "type.googleapis.com/google.rpc.RetryInfo";
const ERROR_INFO_URL = "type.googleapis.com/google.rpc.ErrorInfo";
const BAD_REQUEST_URL = "type.googleapis.com/google.rpc.BadRequest";
const DETAILS_TRAILER = "grpc-status-details-bin";

export interface FieldViolation {
  /** The request field's path, e.g. `config.output_numeric.operator`. */
  field: string;
  description: string;
}

interface DecodedStatus {
  code: number;
  message: string;
  details: { typeUrl: string; value: Uint8Array }[];
}

export class VerdictRpcError extends Error {
  /** The gRPC status code. */
  readonly code: grpc.status;
  /** The status code's name, e.g. "INVALID_ARGUMENT". */
  readonly codeName: string;
  /** ErrorInfo.reason: a stable UPPER_SNAKE code; empty when the server sent no details. */
  readonly reason: string;
  /** ErrorInfo.domain ("verdict.v1"); empty when the server sent no details. */
  readonly domain: string;
  /** ErrorInfo.metadata: every dynamic value of the message, lowerCamel keys. */
  readonly metadata: Readonly<Record<string, string>>;
  /** BadRequest.field_violations, for INVALID_ARGUMENT. */
  readonly fieldViolations: readonly FieldViolation[];
  /** The call's trailing metadata, as received. */
  readonly trailers: grpc.Metadata | undefined;
  /**
   * RetryInfo.retry_delay in milliseconds: how long the server asked the caller to wait before retrying. Sent with
   * RESOURCE_EXHAUSTED when the server sheds load (busy, not a bad request); undefined otherwise.
   */
  readonly retryAfterMs: number | undefined;

  constructor(
    code: grpc.status,
    message: string,
    details: {
      reason?: string;
      domain?: string;
      metadata?: Record<string, string>;
      fieldViolations?: FieldViolation[];
      trailers?: grpc.Metadata;
      retryAfterMs?: number;
      cause?: unknown;
    } = {},
  ) {
    const codeName = grpc.status[code] ?? String(code);
    super(`${codeName}${details.reason ? ` [${details.reason}]` : ""}: ${message}`, { cause: details.cause });
    this.name = "VerdictRpcError";
    this.code = code;
    this.codeName = codeName;
    this.reason = details.reason ?? "";
    this.domain = details.domain ?? "";
    this.metadata = Object.freeze({ ...details.metadata });
    this.fieldViolations = Object.freeze([...(details.fieldViolations ?? [])]);
    this.trailers = details.trailers;
    this.retryAfterMs = details.retryAfterMs;
  }

  /** The first violated field's path, if the server named one. */
  get field(): string | undefined {
    return this.fieldViolations[0]?.field;
  }

  /** Decode a grpc-js ServiceError (its trailers carry the rich status). */
  static fromServiceError(error: grpc.ServiceError): VerdictRpcError {
    const raw = error.metadata?.get(DETAILS_TRAILER)[0];
    const status: DecodedStatus =
      raw === undefined
        ? { code: error.code, message: error.details ?? "", details: [] }
        : (StatusType.toObject(StatusType.decode(toBytes(raw)), { defaults: true }) as DecodedStatus);
    return VerdictRpcError.decode(error.code, error.details ?? "", status.details, error.metadata, error);
  }

  /**
   * The error of one failed batch item, from the google.rpc.Status its result carries (as proto-loader decodes it:
   * an Any keeps its wire name `type_url`).
   */
  static fromStatus(status: {
    code?: number;
    message?: string;
    details?: { type_url?: string; typeUrl?: string; value?: Uint8Array }[];
  }): VerdictRpcError {
    const details = (status.details ?? []).map((detail) => ({
      typeUrl: detail.type_url ?? detail.typeUrl ?? "",
      value: detail.value ?? new Uint8Array(),
    }));
    return VerdictRpcError.decode(status.code ?? grpc.status.UNKNOWN, status.message ?? "", details);
  }

  private static decode(
    code: grpc.status,
    message: string,
    details: DecodedStatus["details"],
    trailers?: grpc.Metadata,
    cause?: unknown,
  ): VerdictRpcError {
    let reason = "";
    let domain = "";
    let metadata: Record<string, string> = {};
    let retryAfterMs: number | undefined;
    const fieldViolations: FieldViolation[] = [];
    for (const detail of details) {
      if (detail.typeUrl === ERROR_INFO_URL && !reason) {
        const info = ErrorInfoType.toObject(ErrorInfoType.decode(detail.value), { defaults: true }) as {
          reason: string;
          domain: string;
          metadata: { key: string; value: string }[];
        };
        ({ reason, domain } = info);
        metadata = Object.fromEntries(info.metadata.map((entry) => [entry.key, entry.value]));
      } else if (detail.typeUrl === BAD_REQUEST_URL) {
        const bad = BadRequestType.toObject(BadRequestType.decode(detail.value), { defaults: true });
        fieldViolations.push(...(bad.fieldViolations as FieldViolation[]));
      } else if (detail.typeUrl === RETRY_INFO_URL) {
        const retry = RetryInfoType.toObject(RetryInfoType.decode(detail.value), { defaults: true, longs: Number }) as {
          retryDelay?: { seconds: number; nanos: number };
        };
        retryAfterMs = (retry.retryDelay?.seconds ?? 0) * 1000 + (retry.retryDelay?.nanos ?? 0) / 1e6;
      }
    }
    return new VerdictRpcError(code, message, { reason, domain, metadata, fieldViolations, trailers, retryAfterMs, cause });
  }
}

function toBytes(value: string | Buffer): Uint8Array {
  return typeof value === "string" ? Buffer.from(value, "base64") : value;
}
