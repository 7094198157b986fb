// Original file: verdict/v1/verdict.proto

import type { VerifyVerdict as _verdict_v1_VerifyVerdict, VerifyVerdict__Output as _verdict_v1_VerifyVerdict__Output } from '../../verdict/v1/VerifyVerdict';

/**
 * ToolCallCheck is the outcome of checking one tool call.
 */
export interface ToolCallCheck {
  /**
   * Zero-based index of the call among the turn's calls.
   */
  'callIndex'?: (number);
  /**
   * The call's id, as sent.
   */
  'id'?: (string);
  /**
   * The called function's name, as sent.
   */
  'name'?: (string);
  /**
   * The call's verdict: OK, TRUNCATED (cut with a length finish reason) or MALFORMED.
   */
  'verdict'?: (_verdict_v1_VerifyVerdict);
  /**
   * What is wrong, in words a person can act on; empty when the call is OK.
   */
  'detail'?: (string);
  /**
   * A JSON Pointer (RFC 6901) into the arguments to the offending value, when there is one.
   */
  'pointer'?: (string);
  /**
   * A stable machine-readable reason ("not_json", "unknown_tool", "schema", ...); empty when OK.
   */
  'reason'?: (string);
  /**
   * The SHA-256 (hex) of the canonical JSON of the schema the call was checked against; empty when none was.
   */
  'schemaDigest'?: (string);
}

/**
 * ToolCallCheck is the outcome of checking one tool call.
 */
export interface ToolCallCheck__Output {
  /**
   * Zero-based index of the call among the turn's calls.
   */
  'callIndex': (number);
  /**
   * The call's id, as sent.
   */
  'id': (string);
  /**
   * The called function's name, as sent.
   */
  'name': (string);
  /**
   * The call's verdict: OK, TRUNCATED (cut with a length finish reason) or MALFORMED.
   */
  'verdict': (_verdict_v1_VerifyVerdict__Output);
  /**
   * What is wrong, in words a person can act on; empty when the call is OK.
   */
  'detail': (string);
  /**
   * A JSON Pointer (RFC 6901) into the arguments to the offending value, when there is one.
   */
  'pointer': (string);
  /**
   * A stable machine-readable reason ("not_json", "unknown_tool", "schema", ...); empty when OK.
   */
  'reason': (string);
  /**
   * The SHA-256 (hex) of the canonical JSON of the schema the call was checked against; empty when none was.
   */
  'schemaDigest': (string);
}
