// Original file: verdict/v1/verdict.proto

import type { EvaluatorInfo as _verdict_v1_EvaluatorInfo, EvaluatorInfo__Output as _verdict_v1_EvaluatorInfo__Output } from '../../verdict/v1/EvaluatorInfo';

/**
 * ListEvaluatorsResponse is the evaluator catalogue.
 */
export interface ListEvaluatorsResponse {
  /**
   * Every evaluator type the server runs, sorted by type.
   */
  'evaluators'?: (_verdict_v1_EvaluatorInfo)[];
}

/**
 * ListEvaluatorsResponse is the evaluator catalogue.
 */
export interface ListEvaluatorsResponse__Output {
  /**
   * Every evaluator type the server runs, sorted by type.
   */
  'evaluators': (_verdict_v1_EvaluatorInfo__Output)[];
}
