// Original file: verdict/v1/verdict.proto

import type { ExpectedToolCall as _verdict_v1_ExpectedToolCall, ExpectedToolCall__Output as _verdict_v1_ExpectedToolCall__Output } from '../../verdict/v1/ExpectedToolCall';

/**
 * TrajectoryConfig configures trajectory: the agent's tool calls checked against the expected ones.
 */
export interface TrajectoryConfig {
  /**
   * The tool calls the agent is expected to make, in order where the match mode reads order. Required.
   */
  'expected'?: (_verdict_v1_ExpectedToolCall)[];
  /**
   * exact (same calls, same order, nothing else), in_order (the expected calls in order, others allowed between),
   * any_order (the same calls in any order), subset (every call made is among the expected ones) or superset (the
   * calls made include every expected one). Default: exact.
   */
  'match'?: (string);
  /**
   * How arguments compare: exact (equal JSON values, types included), canonical (equal JSON values, numbers by
   * value, so 1 and 1.0 and any whitespace or key order match), subset (the expected arguments are among the call's)
   * or ignore. Default: canonical.
   */
  'arguments'?: (string);
  /**
   * The score at or above which the trajectory passes, between 0 and 1. Default: 1 (the match mode holds).
   */
  'threshold'?: (number | string);
  '_match'?: "match";
  '_arguments'?: "arguments";
  '_threshold'?: "threshold";
}

/**
 * TrajectoryConfig configures trajectory: the agent's tool calls checked against the expected ones.
 */
export interface TrajectoryConfig__Output {
  /**
   * The tool calls the agent is expected to make, in order where the match mode reads order. Required.
   */
  'expected': (_verdict_v1_ExpectedToolCall__Output)[];
  /**
   * exact (same calls, same order, nothing else), in_order (the expected calls in order, others allowed between),
   * any_order (the same calls in any order), subset (every call made is among the expected ones) or superset (the
   * calls made include every expected one). Default: exact.
   */
  'match'?: (string);
  /**
   * How arguments compare: exact (equal JSON values, types included), canonical (equal JSON values, numbers by
   * value, so 1 and 1.0 and any whitespace or key order match), subset (the expected arguments are among the call's)
   * or ignore. Default: canonical.
   */
  'arguments'?: (string);
  /**
   * The score at or above which the trajectory passes, between 0 and 1. Default: 1 (the match mode holds).
   */
  'threshold'?: (number);
  '_match'?: "match";
  '_arguments'?: "arguments";
  '_threshold'?: "threshold";
}
