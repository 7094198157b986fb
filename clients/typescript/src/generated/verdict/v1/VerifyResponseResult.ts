// Original file: verdict/v1/verdict.proto

import type { VerifyResponseResponse as _verdict_v1_VerifyResponseResponse, VerifyResponseResponse__Output as _verdict_v1_VerifyResponseResponse__Output } from '../../verdict/v1/VerifyResponseResponse';
import type { Status as _google_rpc_Status, Status__Output as _google_rpc_Status__Output } from '../../google/rpc/Status';

/**
 * VerifyResponseResult is the outcome of one item of a batch: its verdict, or its own error.
 */
export interface VerifyResponseResult {
  /**
   * The verdict, as VerifyResponse would have returned it.
   */
  'response'?: (_verdict_v1_VerifyResponseResponse | null);
  /**
   * The status VerifyResponse would have failed with (code, message, ErrorInfo and BadRequest details), or
   * DEADLINE_EXCEEDED for an item the batch's deadline left unfinished.
   */
  'error'?: (_google_rpc_Status | null);
  /**
   * Exactly one is set.
   */
  'outcome'?: "response"|"error";
}

/**
 * VerifyResponseResult is the outcome of one item of a batch: its verdict, or its own error.
 */
export interface VerifyResponseResult__Output {
  /**
   * The verdict, as VerifyResponse would have returned it.
   */
  'response'?: (_verdict_v1_VerifyResponseResponse__Output | null);
  /**
   * The status VerifyResponse would have failed with (code, message, ErrorInfo and BadRequest details), or
   * DEADLINE_EXCEEDED for an item the batch's deadline left unfinished.
   */
  'error'?: (_google_rpc_Status__Output | null);
  /**
   * Exactly one is set.
   */
  'outcome'?: "response"|"error";
}
