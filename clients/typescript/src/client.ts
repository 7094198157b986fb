/**
 * VerdictClient: one promise-returning method per RPC of verdict.v1.VerdictService.
 */
import * as grpc from "@grpc/grpc-js";
import { channelCredentials, channelOptions, type ClientOptions, DEFAULTS } from "./config";
import { contract } from "./contract";
import { VerdictRpcError } from "./errors";
import { JUDGE_TYPES } from "./judgeTypes";
import type { BatchEvaluateResponse__Output } from "./generated/verdict/v1/BatchEvaluateResponse";
import type { BatchVerifyResponsesResponse__Output } from "./generated/verdict/v1/BatchVerifyResponsesResponse";
import type { EvaluateRequest } from "./generated/verdict/v1/EvaluateRequest";
import type { EvaluateResponse__Output } from "./generated/verdict/v1/EvaluateResponse";
import type { EvaluatorConfig } from "./generated/verdict/v1/EvaluatorConfig";
import type { ListEvaluatorsResponse__Output } from "./generated/verdict/v1/ListEvaluatorsResponse";
import type { VerdictServiceClient } from "./generated/verdict/v1/VerdictService";
import type { ToolCall } from "./generated/verdict/v1/ToolCall";
import type { ToolDefinition } from "./generated/verdict/v1/ToolDefinition";
import type { VerifyResponseRequest } from "./generated/verdict/v1/VerifyResponseRequest";
import type { VerifyResponseResponse__Output } from "./generated/verdict/v1/VerifyResponseResponse";
import { fromStruct, type JsonObject, type JsonValue, toStruct } from "./struct";

/** Evaluator types that ask an LLM judge, generated from the server's records (see ./judgeTypes). */
export { JUDGE_TYPES };

/** A little-loops `evaluate:` block as an object: `{type: "action_stall", max_repeat: 2}`. */
export type EvaluateBlock = { type: string; [key: string]: JsonValue };

/**
 * An evaluator configuration: the typed proto (`{actionStall: {maxRepeat: 2}}`), an evaluate block object (sent as
 * JSON in `EvaluatorConfig.yaml`), or such a block as YAML/JSON text.
 */
export type EvaluatorConfigLike = EvaluatorConfig | EvaluateBlock | string;

export interface CallOptions {
  /** This call's deadline, from now; the client's default when omitted. */
  timeoutMs?: number;
  /** Request metadata (e.g. a request id). */
  metadata?: grpc.Metadata | Record<string, string>;
  /** Cancels the call (status CANCELLED). */
  signal?: AbortSignal;
}

export interface EvaluateInput {
  config: EvaluatorConfigLike;
  /** The action's stdout (or, for score_stall and open_question_stall, the step's score). */
  output?: string;
  /** The action's exit code; 124 means it timed out. */
  exitCode?: number;
  /** Interpolation namespaces for ${...} references: context, captured, prev, result, state, loop, env. */
  context?: JsonObject;
  /** The `state` of this evaluator's previous Evaluation; omit on the first call. */
  state?: Uint8Array;
  /** A directory under the server's workspace_root, for evaluators that read files. */
  workspace?: string;
  /**
   * The tool calls the agent made in this step (trajectory, promptfoo's tool assertions, graders' output_tools):
   * `{id, name, arguments}` (arguments as JSON text or an object) or as OpenAI returns them
   * (`{id, type: "function", function: {name, arguments}}`).
   */
  toolCalls?: ToolCallLike[];
  /** The provider's finish reason (promptfoo's finish-reason). */
  finishReason?: string;
  /** The provider call's latency in milliseconds (promptfoo's latency). */
  latencyMs?: number;
  /** The provider call's cost in dollars (promptfoo's cost). */
  cost?: number;
  /** The completion's token log-probabilities (promptfoo's perplexity). */
  logprobs?: number[];
  /** The tools declared to the model (promptfoo's is-valid-openai-tools-call), plain or in OpenAI's request form. */
  tools?: ToolLike[];
}

/** A tool call: the proto's fields, with arguments as JSON text or an object, or OpenAI's `{function: {...}}` form. */
export type ToolCallLike =
  | { id?: string; name: string; arguments?: string | JsonObject }
  | { id?: string; type?: "function"; function: { name: string; arguments?: string | JsonObject } };

/** A declared tool: name, description, parameters (a JSON Schema object or its text), strict; or OpenAI's form. */
export type ToolLike =
  | { name: string; description?: string; parameters?: string | JsonObject; strict?: boolean }
  | {
      type?: "function";
      function: { name: string; description?: string; parameters?: string | JsonObject; strict?: boolean };
    };

function jsonText(value: string | object | undefined): string {
  if (value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function toolCall(call: ToolCallLike): ToolCall {
  const fn = "function" in call ? call.function : call;
  return { id: call.id ?? "", name: fn.name, arguments: jsonText(fn.arguments) };
}

function toolDefinition(tool: ToolLike): ToolDefinition {
  const fn = "function" in tool ? tool.function : tool;
  return {
    name: fn.name,
    description: fn.description ?? "",
    parameters: jsonText(fn.parameters),
    strict: fn.strict ?? false,
  };
}

/** The routing verdict of one loop step. Send `state` back with the next call of the same evaluator. */
export interface Evaluation {
  verdict: string;
  details: JsonObject;
  state: Buffer;
  raw: EvaluateResponse__Output;
}

/** One tool call of a turn to verify: the same shapes as `ToolCallLike`. */
export type ToolCallInput = ToolCallLike;

/** One declared tool of a turn to verify: the same shapes as `ToolLike` (`strict` for OpenAI strict mode). */
export type ToolInput = ToolLike;

/**
 * One completion to verify. A tool-calling turn goes typed (`text`, `finishReason`, `toolCalls`, `tools`) or as the
 * provider's own JSON: `messageJson` (the response or its assistant message, as the SDK returned it: an object or
 * JSON text) and `toolsJson` (the `tools` array as sent to the provider). The two forms may not be mixed.
 */
export type VerifyInput = Omit<VerifyResponseRequest, "toolCalls" | "tools" | "messageJson" | "toolsJson"> & {
  toolCalls?: ToolCallInput[];
  tools?: ToolInput[];
  messageJson?: string | object;
  toolsJson?: string | object[];
};

function verifyRequest(input: VerifyInput): VerifyResponseRequest {
  const { toolCalls, tools, messageJson, toolsJson, ...rest } = input;
  return {
    ...rest,
    toolCalls: toolCalls?.map(toolCall),
    tools: tools?.map(toolDefinition),
    messageJson: jsonText(messageJson),
    toolsJson: jsonText(toolsJson),
  };
}

/**
 * One entry of a batch answer: the item's result, or the VerdictRpcError that item failed with (returned, not
 * thrown, so one bad item does not hide the others' answers; DEADLINE_EXCEEDED for items the batch's shared
 * deadline left unfinished).
 */
export type BatchResult<T> = T | VerdictRpcError;

/**
 * A structural verdict, spelled as everywhere people read it (CLI, docs, the Python client): the wire enum
 * `VERIFY_VERDICT_MALFORMED` without its prefix, in lower case. `unknown` stands for the zero value and for any value
 * a newer server may add; whether such a verdict failed is still known from `failed`.
 */
export type VerifyVerdict = "ok" | "truncated" | "malformed" | "unverifiable" | "unknown";

/** The outcome of checking one fenced block; `line` and `errorLine` are one-based lines of the response. */
export interface BlockCheck {
  blockIndex: number;
  language: string;
  verdict: VerifyVerdict;
  detail: string;
  line: number;
  errorLine: number;
}

/**
 * The outcome of checking one tool call (or a call left in the text, reason `call_in_text`): `reason` is a stable
 * token (`missing_argument`, `unknown_tool`, `truncated`, ...; empty when ok), `pointer` a JSON Pointer into the
 * arguments, `schemaDigest` the SHA-256 of the schema the call was checked against.
 */
export interface ToolCallCheck {
  callIndex: number;
  id: string;
  name: string;
  verdict: VerifyVerdict;
  detail: string;
  pointer: string;
  reason: string;
  schemaDigest: string;
}

/** The verdict on one completion. `failed` means: do not accept this completion. The proto answer is at `raw`. */
export interface Verification {
  verdict: VerifyVerdict;
  failed: boolean;
  detail: string;
  checks: BlockCheck[];
  toolChecks: ToolCallCheck[];
  secondOpinion: { verdict: VerifyVerdict; reason: string; host: string } | null;
  raw: VerifyResponseResponse__Output;
}

const VERDICTS: ReadonlySet<string> = new Set(["ok", "truncated", "malformed", "unverifiable"]);

/** `VERIFY_VERDICT_MALFORMED` (or its number) -> `malformed`; anything else -> `unknown`. */
export function verdictName(wire: string | number): VerifyVerdict {
  const name = String(wire).replace(/^VERIFY_VERDICT_/, "").toLowerCase();
  return VERDICTS.has(name) ? (name as VerifyVerdict) : "unknown";
}

function verificationFrom(raw: VerifyResponseResponse__Output): Verification {
  const opinion = raw.secondOpinion;
  return {
    verdict: verdictName(raw.verdict),
    failed: raw.failed,
    detail: raw.detail,
    checks: raw.checks.map((check) => ({
      blockIndex: check.blockIndex,
      language: check.language,
      verdict: verdictName(check.verdict),
      detail: check.detail,
      line: check.line,
      errorLine: check.errorLine,
    })),
    toolChecks: raw.toolChecks.map((check) => ({
      callIndex: check.callIndex,
      id: check.id,
      name: check.name,
      verdict: verdictName(check.verdict),
      detail: check.detail,
      pointer: check.pointer,
      reason: check.reason,
      schemaDigest: check.schemaDigest,
    })),
    secondOpinion: opinion ? { verdict: verdictName(opinion.verdict), reason: opinion.reason, host: opinion.host } : null,
    raw,
  };
}

export class VerdictClient {
  readonly target: string;
  private readonly stub: VerdictServiceClient;
  private readonly timeoutMs: number;
  private readonly judgeTimeoutMs: number;
  private readonly bearerToken: string | undefined;

  /**
   * `target` is any gRPC target: `host:port`, or `dns:///verdict-headless.ns.svc.cluster.local:50051` to spread
   * calls over every pod of a headless Service.
   */
  constructor(target: string, options: ClientOptions = {}) {
    this.target = target;
    this.timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
    this.judgeTimeoutMs = options.judgeTimeoutMs ?? DEFAULTS.judgeTimeoutMs;
    if (!(this.timeoutMs > 0 && this.judgeTimeoutMs > 0)) throw new RangeError("deadlines must be positive");
    if (options.bearerToken !== undefined && (options.bearerToken.trim() === "" || /[\r\n]/.test(options.bearerToken))) {
      throw new TypeError("bearerToken must be one non-empty line");
    }
    this.bearerToken = options.bearerToken;
    const Service = contract().verdict.v1.VerdictService;
    this.stub = new Service(target, channelCredentials(options.tls), channelOptions(options));
  }

  /** Structurally verify one completion (VerifyResponse). Verdicts come back lower-case: `"malformed"`. */
  async verifyResponse(request: VerifyInput, options: CallOptions = {}): Promise<Verification> {
    const raw = await this.unary<VerifyResponseRequest, VerifyResponseResponse__Output>(
      (req, meta, opts, done) => this.stub.verifyResponse(req, meta, opts, done),
      verifyRequest(request),
      options,
      false,
    );
    return verificationFrom(raw);
  }

  /** Run one evaluator over one loop step's output (Evaluate). */
  async evaluate(input: EvaluateInput, options: CallOptions = {}): Promise<Evaluation> {
    const request = evaluateRequest(input);
    const raw = await this.unary<EvaluateRequest, EvaluateResponse__Output>(
      (req, meta, opts, done) => this.stub.evaluate(req, meta, opts, done),
      request,
      options,
      usesJudge(request.config ?? {}),
    );
    return evaluation(raw);
  }

  /**
   * Verify many completions in one call (BatchVerifyResponses): one entry per item, in order. Throws only when the
   * whole call fails (a batch over the server's max_batch_items / max_batch_bytes, an overloaded server). The
   * default deadline grows with the batch (the per-call default × items / 10, at most the judge deadline).
   */
  async batchVerifyResponses(items: VerifyInput[], options: CallOptions = {}): Promise<BatchResult<Verification>[]> {
    const raw = await this.unary<{ items: VerifyResponseRequest[] }, BatchVerifyResponsesResponse__Output>(
      (req, meta, opts, done) => this.stub.batchVerifyResponses(req, meta, opts, done),
      { items: items.map(verifyRequest) },
      { ...options, timeoutMs: options.timeoutMs ?? this.batchTimeoutMs(items.length, false) },
      false,
    );
    return raw.results.map((result) =>
      result.response ? verificationFrom(result.response) : VerdictRpcError.fromStatus(result.error ?? { code: grpc.status.UNKNOWN }),
    );
  }

  /** Run many evaluations in one call (BatchEvaluate); results as in `batchVerifyResponses`. */
  async batchEvaluate(items: EvaluateInput[], options: CallOptions = {}): Promise<BatchResult<Evaluation>[]> {
    const requests = items.map(evaluateRequest);
    const judged = requests.some((request) => usesJudge(request.config ?? {}));
    const raw = await this.unary<{ items: EvaluateRequest[] }, BatchEvaluateResponse__Output>(
      (req, meta, opts, done) => this.stub.batchEvaluate(req, meta, opts, done),
      { items: requests },
      { ...options, timeoutMs: options.timeoutMs ?? this.batchTimeoutMs(items.length, judged) },
      judged,
    );
    return raw.results.map((result) =>
      result.response ? evaluation(result.response) : VerdictRpcError.fromStatus(result.error ?? { code: grpc.status.UNKNOWN }),
    );
  }

  private batchTimeoutMs(count: number, judged: boolean): number {
    const single = judged ? this.judgeTimeoutMs : this.timeoutMs;
    return Math.min(Math.max(single, (single * count) / 10), Math.max(single, this.judgeTimeoutMs));
  }

  /** The server's evaluator catalogue (ListEvaluators), sorted by type. */
  listEvaluators(options: CallOptions = {}): Promise<ListEvaluatorsResponse__Output> {
    return this.unary((req, meta, opts, done) => this.stub.listEvaluators(req, meta, opts, done), {}, options, false);
  }

  /** Close the channel; calls in flight fail. */
  close(): void {
    this.stub.close();
  }

  private unary<Request, Response>(
    method: (
      request: Request,
      metadata: grpc.Metadata,
      options: grpc.CallOptions,
      done: grpc.requestCallback<Response>,
    ) => grpc.ClientUnaryCall,
    request: Request,
    options: CallOptions,
    judged: boolean,
  ): Promise<Response> {
    const timeoutMs = options.timeoutMs ?? (judged ? this.judgeTimeoutMs : this.timeoutMs);
    if (!(timeoutMs > 0)) return Promise.reject(new RangeError(`timeoutMs must be positive, got ${timeoutMs}`));
    return new Promise((resolve, reject) => {
      const metadata = toMetadata(options.metadata);
      if (this.bearerToken !== undefined && metadata.get("authorization").length === 0) {
        metadata.set("authorization", `Bearer ${this.bearerToken}`);
      }
      const call = method(request, metadata, { deadline: Date.now() + timeoutMs }, (error, response) => {
        options.signal?.removeEventListener("abort", cancel);
        if (error) reject(VerdictRpcError.fromServiceError(error));
        else if (response === undefined) reject(new VerdictRpcError(grpc.status.INTERNAL, "empty response"));
        else resolve(response);
      });
      const cancel = () => call.cancel();
      if (options.signal?.aborted) cancel();
      else options.signal?.addEventListener("abort", cancel, { once: true });
    });
  }
}

function evaluateRequest(input: EvaluateInput): EvaluateRequest {
  const request: EvaluateRequest = {
    config: evaluatorConfig(input.config),
    output: input.output ?? "",
    exitCode: input.exitCode ?? 0,
    state: input.state === undefined ? Buffer.alloc(0) : Buffer.from(input.state),
    workspace: input.workspace ?? "",
    toolCalls: (input.toolCalls ?? []).map(toolCall),
    finishReason: input.finishReason ?? "",
    logprobs: input.logprobs ?? [],
    tools: (input.tools ?? []).map(toolDefinition),
  };
  if (input.latencyMs !== undefined) request.latencyMs = input.latencyMs;
  if (input.cost !== undefined) request.cost = input.cost;
  if (input.context !== undefined) request.context = toStruct(input.context);
  return request;
}

function evaluation(raw: EvaluateResponse__Output): Evaluation {
  return { verdict: raw.verdict, details: fromStruct(raw.details), state: raw.state, raw };
}

export function evaluatorConfig(config: EvaluatorConfigLike): EvaluatorConfig {
  if (typeof config === "string") return { yaml: config };
  if (typeof config === "object" && config !== null && typeof (config as EvaluateBlock).type === "string") {
    return { yaml: JSON.stringify(config) };
  }
  return config as EvaluatorConfig;
}

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** An OpenAI grader asks a judge when its text names one of these grader types (anywhere, for a multi grader). */
const MODEL_GRADERS = ['"score_model"', '"label_model"'];

function namesModelGrader(text: string): boolean {
  const compact = text.replace(/\s/g, "");
  return MODEL_GRADERS.some((name) => compact.includes(name));
}

/**
 * Whether the evaluation may wait for a judge. YAML text is not parsed here, so it counts as judge-backed; an OpenAI
 * grader does when it names a model grader type, a promptfoo list when it names llm-rubric.
 */
export function usesJudge(config: EvaluatorConfig): boolean {
  if (config.openaiGrader !== undefined) return namesModelGrader(config.openaiGrader);
  if (config.promptfoo !== undefined) return config.promptfoo.includes("llm-rubric");
  if (config.yaml !== undefined) {
    try {
      const block: unknown = JSON.parse(config.yaml);
      if (typeof block === "object" && block !== null && (block as EvaluateBlock).type === "openai_grader") {
        return namesModelGrader(config.yaml);
      }
      if (typeof block === "object" && block !== null && (block as EvaluateBlock).type === "promptfoo") {
        return config.yaml.includes("llm-rubric");
      }
      return typeof block !== "object" || block === null || JUDGE_TYPES.has(String((block as EvaluateBlock).type));
    } catch {
      return true;
    }
  }
  return Object.keys(config).some((key) => JUDGE_TYPES.has(snake(key)));
}

function toMetadata(metadata: CallOptions["metadata"]): grpc.Metadata {
  if (metadata instanceof grpc.Metadata) return metadata.clone();
  const result = new grpc.Metadata();
  for (const [key, value] of Object.entries(metadata ?? {})) result.add(key, value);
  return result;
}
