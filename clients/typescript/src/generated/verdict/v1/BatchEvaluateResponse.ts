// Original file: verdict/v1/verdict.proto

import type { EvaluateResult as _verdict_v1_EvaluateResult, EvaluateResult__Output as _verdict_v1_EvaluateResult__Output } from '../../verdict/v1/EvaluateResult';

/**
 * BatchEvaluateResponse holds one result per request item, in the same order.
 */
export interface BatchEvaluateResponse {
  /**
   * results[i] answers items[i].
   */
  'results'?: (_verdict_v1_EvaluateResult)[];
}

/**
 * BatchEvaluateResponse holds one result per request item, in the same order.
 */
export interface BatchEvaluateResponse__Output {
  /**
   * results[i] answers items[i].
   */
  'results': (_verdict_v1_EvaluateResult__Output)[];
}
