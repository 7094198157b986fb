// Original file: verdict/v1/verdict.proto

import type { Struct as _google_protobuf_Struct, Struct__Output as _google_protobuf_Struct__Output } from '../../google/protobuf/Struct';

/**
 * LlmStructuredConfig configures llm_structured.
 */
export interface LlmStructuredConfig {
  /**
   * What to judge; interpolated. Default: whether the action succeeded, judged from its output.
   */
  'prompt'?: (string);
  /**
   * A custom JSON schema for the judge's answer; custom schemas skip the default grammar and evidence rules.
   */
  'schema'?: (_google_protobuf_Struct | null);
  /**
   * Minimum confidence for a confident verdict. Default 0.5, between 0 and 1.
   */
  'minConfidence'?: (number | string);
  /**
   * Append `_uncertain` to verdicts below min_confidence.
   */
  'uncertainSuffix'?: (boolean);
  /**
   * The model alias passed to the judge host. Default: the server's judge_model.
   */
  'model'?: (string);
  /**
   * Ask the judge again instead of answering from the ruling cache (to sample several rulings on purpose).
   */
  'fresh'?: (boolean);
  '_prompt'?: "prompt";
  '_minConfidence'?: "minConfidence";
  '_model'?: "model";
}

/**
 * LlmStructuredConfig configures llm_structured.
 */
export interface LlmStructuredConfig__Output {
  /**
   * What to judge; interpolated. Default: whether the action succeeded, judged from its output.
   */
  'prompt'?: (string);
  /**
   * A custom JSON schema for the judge's answer; custom schemas skip the default grammar and evidence rules.
   */
  'schema': (_google_protobuf_Struct__Output | null);
  /**
   * Minimum confidence for a confident verdict. Default 0.5, between 0 and 1.
   */
  'minConfidence'?: (number);
  /**
   * Append `_uncertain` to verdicts below min_confidence.
   */
  'uncertainSuffix': (boolean);
  /**
   * The model alias passed to the judge host. Default: the server's judge_model.
   */
  'model'?: (string);
  /**
   * Ask the judge again instead of answering from the ruling cache (to sample several rulings on purpose).
   */
  'fresh': (boolean);
  '_prompt'?: "prompt";
  '_minConfidence'?: "minConfidence";
  '_model'?: "model";
}
