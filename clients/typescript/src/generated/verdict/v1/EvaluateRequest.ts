// Original file: verdict/v1/verdict.proto

import type { EvaluatorConfig as _verdict_v1_EvaluatorConfig, EvaluatorConfig__Output as _verdict_v1_EvaluatorConfig__Output } from '../../verdict/v1/EvaluatorConfig';
import type { Struct as _google_protobuf_Struct, Struct__Output as _google_protobuf_Struct__Output } from '../../google/protobuf/Struct';
import type { ToolCall as _verdict_v1_ToolCall, ToolCall__Output as _verdict_v1_ToolCall__Output } from '../../verdict/v1/ToolCall';
import type { ToolDefinition as _verdict_v1_ToolDefinition, ToolDefinition__Output as _verdict_v1_ToolDefinition__Output } from '../../verdict/v1/ToolDefinition';

/**
 * EvaluateRequest carries one loop step's output and the evaluator configuration to judge it with.
 */
export interface EvaluateRequest {
  /**
   * The evaluator to run.
   */
  'config'?: (_verdict_v1_EvaluatorConfig | null);
  /**
   * The action's stdout (or, for score_stall and open_question_stall, the step's score).
   */
  'output'?: (string);
  /**
   * The action's exit code. 124 means the action timed out.
   */
  'exitCode'?: (number);
  /**
   * The interpolation namespaces for ${...} references: context, captured, prev, result, state, loop, env, ...
   */
  'context'?: (_google_protobuf_Struct | null);
  /**
   * The opaque state token from this evaluator's previous response; empty on the first call.
   */
  'state'?: (Buffer | Uint8Array | string);
  /**
   * A directory under the server's workspace_root, for evaluators that read files (diff_stall, comparator,
   * contract). Relative paths resolve against workspace_root.
   */
  'workspace'?: (string);
  /**
   * The tool calls the agent made in this step (trajectory, promptfoo's tool assertions, graders' output_tools).
   */
  'toolCalls'?: (_verdict_v1_ToolCall)[];
  /**
   * The provider's finish reason for the step's completion (promptfoo's finish-reason).
   */
  'finishReason'?: (string);
  /**
   * The provider call's latency in milliseconds, when known (promptfoo's latency).
   */
  'latencyMs'?: (number | string);
  /**
   * The provider call's cost in dollars, when known (promptfoo's cost).
   */
  'cost'?: (number | string);
  /**
   * The completion's token log-probabilities, when known (promptfoo's perplexity).
   */
  'logprobs'?: (number | string)[];
  /**
   * The tools declared to the model in this step (promptfoo's is-valid-openai-tools-call validates calls against them).
   */
  'tools'?: (_verdict_v1_ToolDefinition)[];
  '_latencyMs'?: "latencyMs";
  '_cost'?: "cost";
}

/**
 * EvaluateRequest carries one loop step's output and the evaluator configuration to judge it with.
 */
export interface EvaluateRequest__Output {
  /**
   * The evaluator to run.
   */
  'config': (_verdict_v1_EvaluatorConfig__Output | null);
  /**
   * The action's stdout (or, for score_stall and open_question_stall, the step's score).
   */
  'output': (string);
  /**
   * The action's exit code. 124 means the action timed out.
   */
  'exitCode': (number);
  /**
   * The interpolation namespaces for ${...} references: context, captured, prev, result, state, loop, env, ...
   */
  'context': (_google_protobuf_Struct__Output | null);
  /**
   * The opaque state token from this evaluator's previous response; empty on the first call.
   */
  'state': (Buffer);
  /**
   * A directory under the server's workspace_root, for evaluators that read files (diff_stall, comparator,
   * contract). Relative paths resolve against workspace_root.
   */
  'workspace': (string);
  /**
   * The tool calls the agent made in this step (trajectory, promptfoo's tool assertions, graders' output_tools).
   */
  'toolCalls': (_verdict_v1_ToolCall__Output)[];
  /**
   * The provider's finish reason for the step's completion (promptfoo's finish-reason).
   */
  'finishReason': (string);
  /**
   * The provider call's latency in milliseconds, when known (promptfoo's latency).
   */
  'latencyMs'?: (number);
  /**
   * The provider call's cost in dollars, when known (promptfoo's cost).
   */
  'cost'?: (number);
  /**
   * The completion's token log-probabilities, when known (promptfoo's perplexity).
   */
  'logprobs': (number)[];
  /**
   * The tools declared to the model in this step (promptfoo's is-valid-openai-tools-call validates calls against them).
   */
  'tools': (_verdict_v1_ToolDefinition__Output)[];
  '_latencyMs'?: "latencyMs";
  '_cost'?: "cost";
}
