// Original file: verdict/v1/verdict.proto

import type { EvaluateRequest as _verdict_v1_EvaluateRequest, EvaluateRequest__Output as _verdict_v1_EvaluateRequest__Output } from '../../verdict/v1/EvaluateRequest';

/**
 * BatchEvaluateRequest carries many evaluations to run independently.
 */
export interface BatchEvaluateRequest {
  /**
   * The evaluations, each exactly what an Evaluate call would send. At most the server's max_batch_items.
   */
  'items'?: (_verdict_v1_EvaluateRequest)[];
}

/**
 * BatchEvaluateRequest carries many evaluations to run independently.
 */
export interface BatchEvaluateRequest__Output {
  /**
   * The evaluations, each exactly what an Evaluate call would send. At most the server's max_batch_items.
   */
  'items': (_verdict_v1_EvaluateRequest__Output)[];
}
