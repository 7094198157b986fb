// Original file: verdict/v1/verdict.proto

import type { EvaluatorConfig as _verdict_v1_EvaluatorConfig, EvaluatorConfig__Output as _verdict_v1_EvaluatorConfig__Output } from '../../verdict/v1/EvaluatorConfig';
import type { Struct as _google_protobuf_Struct, Struct__Output as _google_protobuf_Struct__Output } from '../../google/protobuf/Struct';

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
}
