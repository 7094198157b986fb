/**
 * @verdict/client: a typed Node.js client for Verdict (verdict.v1.VerdictService) over @grpc/grpc-js.
 *
 * ```ts
 * const verdict = new VerdictClient("dns:///verdict-headless.verdict.svc.cluster.local:50051");
 * const result = await verdict.verifyResponse({ text, finishReason: "stop" });
 * if (result.failed) { ... }
 * ```
 */
export {
  type BatchResult,
  type BlockCheck,
  type CallOptions,
  type EvaluateBlock,
  type EvaluateInput,
  type Evaluation,
  type EvaluatorConfigLike,
  type ToolCallCheck,
  type ToolCallInput,
  type ToolInput,
  type ToolCallLike,
  type ToolLike,
  VerdictClient,
  type Verification,
  verdictName,
  type VerifyInput,
  type VerifyVerdict,
} from "./client";
export { type ClientOptions, channelOptions, type Keepalive, type RetryPolicy, serviceConfig, type TlsOptions } from "./config";
export { type FieldViolation, VerdictRpcError } from "./errors";
export type { JsonObject, JsonValue } from "./struct";
export type { EvaluatorConfig } from "./generated/verdict/v1/EvaluatorConfig";
export type { EvaluatorInfo__Output as EvaluatorInfo } from "./generated/verdict/v1/EvaluatorInfo";
export type { ListEvaluatorsResponse__Output as ListEvaluatorsResponse } from "./generated/verdict/v1/ListEvaluatorsResponse";
export type { VerifierLanguage__Output as VerifierLanguage } from "./generated/verdict/v1/VerifierLanguage";
