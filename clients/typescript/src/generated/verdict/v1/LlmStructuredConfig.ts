// Original file: verdict/v1/verdict.proto

import type { Struct as _google_protobuf_Struct, Struct__Output as _google_protobuf_Struct__Output } from '../../google/protobuf/Struct';
import type { JudgeMember as _verdict_v1_JudgeMember, JudgeMember__Output as _verdict_v1_JudgeMember__Output } from '../../verdict/v1/JudgeMember';

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
  /**
   * A panel of judges asked concurrently instead of the one judge host; each member's ruling is cached under its
   * own key and listed in the details. Empty: the server's judge host (or the panel `judge` names).
   */
  'judges'?: (_verdict_v1_JudgeMember)[];
  /**
   * How the panel's votes decide: "majority" (default), "unanimous" or a number k (at least k agreeing votes),
   * counted over the members that answered; too few answers make the verdict `error`.
   */
  'quorum'?: (string);
  /**
   * A judge or panel named in the server's judge_panels_file (e.g. "panel-a"), instead of `judges`.
   */
  'judge'?: (string);
  /**
   * Ask each judge this many times and take the majority, the spread reported (self-consistency). Default 1.
   */
  'samples'?: (number);
  /**
   * What a panel without a winning verdict gives: "error" (default), "cautious" (the evaluator's failing verdict)
   * or "first" (the vote of the first listed member that answered).
   */
  'tie'?: (string);
  '_prompt'?: "prompt";
  '_minConfidence'?: "minConfidence";
  '_model'?: "model";
  '_quorum'?: "quorum";
  '_judge'?: "judge";
  '_samples'?: "samples";
  '_tie'?: "tie";
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
  /**
   * A panel of judges asked concurrently instead of the one judge host; each member's ruling is cached under its
   * own key and listed in the details. Empty: the server's judge host (or the panel `judge` names).
   */
  'judges': (_verdict_v1_JudgeMember__Output)[];
  /**
   * How the panel's votes decide: "majority" (default), "unanimous" or a number k (at least k agreeing votes),
   * counted over the members that answered; too few answers make the verdict `error`.
   */
  'quorum'?: (string);
  /**
   * A judge or panel named in the server's judge_panels_file (e.g. "panel-a"), instead of `judges`.
   */
  'judge'?: (string);
  /**
   * Ask each judge this many times and take the majority, the spread reported (self-consistency). Default 1.
   */
  'samples'?: (number);
  /**
   * What a panel without a winning verdict gives: "error" (default), "cautious" (the evaluator's failing verdict)
   * or "first" (the vote of the first listed member that answered).
   */
  'tie'?: (string);
  '_prompt'?: "prompt";
  '_minConfidence'?: "minConfidence";
  '_model'?: "model";
  '_quorum'?: "quorum";
  '_judge'?: "judge";
  '_samples'?: "samples";
  '_tie'?: "tie";
}
