// Original file: verdict/v1/verdict.proto

import type { EvaluateResponse as _verdict_v1_EvaluateResponse, EvaluateResponse__Output as _verdict_v1_EvaluateResponse__Output } from '../../verdict/v1/EvaluateResponse';
import type { Status as _google_rpc_Status, Status__Output as _google_rpc_Status__Output } from '../../google/rpc/Status';

/**
 * EvaluateResult is the outcome of one item of a batch: its verdict, or its own error.
 */
export interface EvaluateResult {
  /**
   * The routing verdict, as Evaluate would have returned it.
   */
  'response'?: (_verdict_v1_EvaluateResponse | null);
  /**
   * The status Evaluate would have failed with (code, message, ErrorInfo and BadRequest details), or
   * DEADLINE_EXCEEDED for an item the batch's deadline left unfinished.
   */
  'error'?: (_google_rpc_Status | null);
  /**
   * Exactly one is set.
   */
  'outcome'?: "response"|"error";
}

/**
 * EvaluateResult is the outcome of one item of a batch: its verdict, or its own error.
 */
export interface EvaluateResult__Output {
  /**
   * The routing verdict, as Evaluate would have returned it.
   */
  'response'?: (_verdict_v1_EvaluateResponse__Output | null);
  /**
   * The status Evaluate would have failed with (code, message, ErrorInfo and BadRequest details), or
   * DEADLINE_EXCEEDED for an item the batch's deadline left unfinished.
   */
  'error'?: (_google_rpc_Status__Output | null);
  /**
   * Exactly one is set.
   */
  'outcome'?: "response"|"error";
}
