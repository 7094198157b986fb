// Original file: verdict/v1/verdict.proto

import type { VerifyResponseResult as _verdict_v1_VerifyResponseResult, VerifyResponseResult__Output as _verdict_v1_VerifyResponseResult__Output } from '../../verdict/v1/VerifyResponseResult';

/**
 * BatchVerifyResponsesResponse holds one result per request item, in the same order.
 */
export interface BatchVerifyResponsesResponse {
  /**
   * results[i] answers items[i].
   */
  'results'?: (_verdict_v1_VerifyResponseResult)[];
}

/**
 * BatchVerifyResponsesResponse holds one result per request item, in the same order.
 */
export interface BatchVerifyResponsesResponse__Output {
  /**
   * results[i] answers items[i].
   */
  'results': (_verdict_v1_VerifyResponseResult__Output)[];
}
