/**
 * Client defaults, the same as the Python client's (docs/clients.md): a deadline on every call, UNAVAILABLE retried
 * by gRPC's retry policy, round_robin over every address of the target, keepalive inside servers' default limits,
 * 4 MiB messages, plaintext unless `tls` is given.
 */
import * as grpc from "@grpc/grpc-js";
import { SERVICE_NAME } from "./contract";

export interface RetryPolicy {
  /** Attempts in total, the first included; gRPC caps it at 5. 1 disables retries. Default 4. */
  maxAttempts?: number;
  /** Upper bound of the first randomised back-off. Default 200 ms. */
  initialBackoffMs?: number;
  /** Upper bound of any back-off. Default 5 s. */
  maxBackoffMs?: number;
  /** Growth of the back-off bound per attempt. Default 2. */
  backoffMultiplier?: number;
}

export interface Keepalive {
  /** Interval between pings while calls are in flight. Default 300 s: gRPC servers by default answer pings sent
   * more often than every 5 minutes with GOAWAY "too_many_pings". */
  timeMs?: number;
  /** How long a ping may go unanswered before the connection is dropped. Default 20 s. */
  timeoutMs?: number;
  /** Ping idle connections too; servers at their defaults refuse that. Default false. */
  permitWithoutCalls?: boolean;
}

export interface TlsOptions {
  /** PEM roots that verify the server; the system's roots when omitted. */
  rootCertificates?: Buffer;
  /** PEM client key, for mutual TLS (with certificateChain). */
  privateKey?: Buffer;
  /** PEM client certificate chain, for mutual TLS (with privateKey). */
  certificateChain?: Buffer;
  /** Host name expected in the server certificate when it differs from the target's. */
  serverNameOverride?: string;
}

export interface ClientOptions {
  /** Default deadline of VerifyResponse, ListEvaluators and Evaluate of types that run no judge. Default 30 s. */
  timeoutMs?: number;
  /** Default deadline of Evaluate for judge-backed types and YAML text configs. Default 330 s (the server's
   * default judge time limit plus a margin). */
  judgeTimeoutMs?: number;
  retry?: RetryPolicy;
  /** round_robin (default) spreads calls over every address a `dns:///` target resolves to; pick_first pins. */
  loadBalancing?: "round_robin" | "pick_first";
  keepalive?: Keepalive;
  /** Transport security; plaintext when omitted. */
  tls?: TlsOptions;
  /** Sent as `authorization: Bearer <token>` on every call, for a server with auth on (a call's own
   * `authorization` metadata wins). Use it with `tls`, or on loopback only: plaintext exposes it on the path. */
  bearerToken?: string;
  /** Largest message sent or received. Default 4 MiB, the server's default limit. */
  maxMessageBytes?: number;
  /** Extra raw channel options, applied last. */
  channelOptions?: grpc.ChannelOptions;
}

export const DEFAULTS = {
  timeoutMs: 30_000,
  judgeTimeoutMs: 330_000,
  retry: { maxAttempts: 4, initialBackoffMs: 200, maxBackoffMs: 5_000, backoffMultiplier: 2 },
  loadBalancing: "round_robin",
  keepalive: { timeMs: 300_000, timeoutMs: 20_000, permitWithoutCalls: false },
  maxMessageBytes: 4 * 1024 * 1024,
} as const;

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(9))}s`;
}

/** The gRPC service config: load balancing, and the retry policy of VerdictService. */
export function serviceConfig(options: ClientOptions = {}): Record<string, unknown> {
  const retry = { ...DEFAULTS.retry, ...options.retry };
  if (!Number.isInteger(retry.maxAttempts) || retry.maxAttempts < 1 || retry.maxAttempts > 5) {
    throw new RangeError(`retry.maxAttempts must be an integer between 1 and 5, got ${retry.maxAttempts}`);
  }
  const config: Record<string, unknown> = {
    loadBalancingConfig: [{ [options.loadBalancing ?? DEFAULTS.loadBalancing]: {} }],
  };
  if (retry.maxAttempts > 1) {
    config.methodConfig = [
      {
        name: [{ service: SERVICE_NAME }],
        retryPolicy: {
          maxAttempts: retry.maxAttempts,
          initialBackoff: seconds(retry.initialBackoffMs),
          maxBackoff: seconds(retry.maxBackoffMs),
          backoffMultiplier: retry.backoffMultiplier,
          retryableStatusCodes: ["UNAVAILABLE"],
        },
      },
    ];
  }
  return config;
}

/** Every channel option the client sets. */
export function channelOptions(options: ClientOptions = {}): grpc.ChannelOptions {
  const keepalive = { ...DEFAULTS.keepalive, ...options.keepalive };
  if (keepalive.timeMs < 10_000) throw new RangeError(`keepalive.timeMs must be at least 10000, got ${keepalive.timeMs}`);
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULTS.maxMessageBytes;
  const channel: grpc.ChannelOptions = {
    "grpc.service_config": JSON.stringify(serviceConfig(options)),
    "grpc.service_config_disable_resolution": 1,
    "grpc.enable_retries": (options.retry?.maxAttempts ?? DEFAULTS.retry.maxAttempts) > 1 ? 1 : 0,
    "grpc.keepalive_time_ms": keepalive.timeMs,
    "grpc.keepalive_timeout_ms": keepalive.timeoutMs,
    "grpc.keepalive_permit_without_calls": keepalive.permitWithoutCalls ? 1 : 0,
    "grpc.max_send_message_length": maxMessageBytes,
    "grpc.max_receive_message_length": maxMessageBytes,
  };
  if (options.tls?.serverNameOverride) channel["grpc.ssl_target_name_override"] = options.tls.serverNameOverride;
  return { ...channel, ...options.channelOptions };
}

export function channelCredentials(tls: TlsOptions | undefined): grpc.ChannelCredentials {
  if (tls === undefined) return grpc.credentials.createInsecure();
  if ((tls.privateKey === undefined) !== (tls.certificateChain === undefined)) {
    throw new TypeError("tls.privateKey and tls.certificateChain are set together (mutual TLS) or not at all");
  }
  return grpc.credentials.createSsl(tls.rootCertificates ?? null, tls.privateKey ?? null, tls.certificateChain ?? null);
}
