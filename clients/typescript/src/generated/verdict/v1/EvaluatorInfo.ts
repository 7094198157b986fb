// Original file: verdict/v1/verdict.proto

import type { EvaluatorField as _verdict_v1_EvaluatorField, EvaluatorField__Output as _verdict_v1_EvaluatorField__Output } from '../../verdict/v1/EvaluatorField';

/**
 * EvaluatorInfo describes one evaluator type.
 */
export interface EvaluatorInfo {
  /**
   * The type name, as in `type:` of an evaluate block.
   */
  'type'?: (string);
  /**
   * What the evaluator does, in one sentence.
   */
  'description'?: (string);
  /**
   * Every configuration field the type accepts.
   */
  'fields'?: (_verdict_v1_EvaluatorField)[];
  /**
   * Every verdict the type can return; open_verdicts says whether others are possible.
   */
  'verdicts'?: (string)[];
  /**
   * True when the verdict set is open (classify, or a custom judge schema).
   */
  'openVerdicts'?: (boolean);
  /**
   * True when the type reads the exit code itself, so a non-zero exit does not short-circuit to `error`.
   */
  'exitCodeAware'?: (boolean);
  /**
   * True when the type asks an LLM judge.
   */
  'usesJudge'?: (boolean);
  /**
   * True when the type returns a state token that must be sent back on the next call.
   */
  'stateful'?: (boolean);
}

/**
 * EvaluatorInfo describes one evaluator type.
 */
export interface EvaluatorInfo__Output {
  /**
   * The type name, as in `type:` of an evaluate block.
   */
  'type': (string);
  /**
   * What the evaluator does, in one sentence.
   */
  'description': (string);
  /**
   * Every configuration field the type accepts.
   */
  'fields': (_verdict_v1_EvaluatorField__Output)[];
  /**
   * Every verdict the type can return; open_verdicts says whether others are possible.
   */
  'verdicts': (string)[];
  /**
   * True when the verdict set is open (classify, or a custom judge schema).
   */
  'openVerdicts': (boolean);
  /**
   * True when the type reads the exit code itself, so a non-zero exit does not short-circuit to `error`.
   */
  'exitCodeAware': (boolean);
  /**
   * True when the type asks an LLM judge.
   */
  'usesJudge': (boolean);
  /**
   * True when the type returns a state token that must be sent back on the next call.
   */
  'stateful': (boolean);
}
