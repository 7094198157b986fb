// Original file: verdict/v1/verdict.proto

import type { VerifyResponseRequest as _verdict_v1_VerifyResponseRequest, VerifyResponseRequest__Output as _verdict_v1_VerifyResponseRequest__Output } from '../../verdict/v1/VerifyResponseRequest';

/**
 * BatchVerifyResponsesRequest carries many completions to verify independently.
 */
export interface BatchVerifyResponsesRequest {
  /**
   * The completions, each exactly what a VerifyResponse call would send. At most the server's max_batch_items.
   */
  'items'?: (_verdict_v1_VerifyResponseRequest)[];
}

/**
 * BatchVerifyResponsesRequest carries many completions to verify independently.
 */
export interface BatchVerifyResponsesRequest__Output {
  /**
   * The completions, each exactly what a VerifyResponse call would send. At most the server's max_batch_items.
   */
  'items': (_verdict_v1_VerifyResponseRequest__Output)[];
}
