// Original file: verdict/v1/verdict.proto

import type { VerifyVerdict as _verdict_v1_VerifyVerdict, VerifyVerdict__Output as _verdict_v1_VerifyVerdict__Output } from '../../verdict/v1/VerifyVerdict';
import type { BlockCheck as _verdict_v1_BlockCheck, BlockCheck__Output as _verdict_v1_BlockCheck__Output } from '../../verdict/v1/BlockCheck';
import type { SecondOpinion as _verdict_v1_SecondOpinion, SecondOpinion__Output as _verdict_v1_SecondOpinion__Output } from '../../verdict/v1/SecondOpinion';
import type { ToolCallCheck as _verdict_v1_ToolCallCheck, ToolCallCheck__Output as _verdict_v1_ToolCallCheck__Output } from '../../verdict/v1/ToolCallCheck';

/**
 * VerifyResponseResponse is the verdict on one completion.
 */
export interface VerifyResponseResponse {
  /**
   * The overall verdict: truncated outranks malformed outranks ok; unverifiable when nothing could be checked.
   */
  'verdict'?: (_verdict_v1_VerifyVerdict);
  /**
   * True for VERIFY_VERDICT_TRUNCATED and VERIFY_VERDICT_MALFORMED: the completion should not be accepted.
   */
  'failed'?: (boolean);
  /**
   * A human-readable explanation of the verdict, naming the first failing block.
   */
  'detail'?: (string);
  /**
   * One entry per fenced block, in document order. Blocks past the server's max_checked_blocks share one
   * unverifiable entry (block_index = the first of them), and an unterminated last block keeps its own entry.
   */
  'checks'?: (_verdict_v1_BlockCheck)[];
  /**
   * The optional local second opinion, present only when one was asked for and gave a usable answer.
   */
  'secondOpinion'?: (_verdict_v1_SecondOpinion | null);
  /**
   * One entry per tool call of the turn, in order (including calls found left in the text as markup).
   */
  'toolChecks'?: (_verdict_v1_ToolCallCheck)[];
}

/**
 * VerifyResponseResponse is the verdict on one completion.
 */
export interface VerifyResponseResponse__Output {
  /**
   * The overall verdict: truncated outranks malformed outranks ok; unverifiable when nothing could be checked.
   */
  'verdict': (_verdict_v1_VerifyVerdict__Output);
  /**
   * True for VERIFY_VERDICT_TRUNCATED and VERIFY_VERDICT_MALFORMED: the completion should not be accepted.
   */
  'failed': (boolean);
  /**
   * A human-readable explanation of the verdict, naming the first failing block.
   */
  'detail': (string);
  /**
   * One entry per fenced block, in document order. Blocks past the server's max_checked_blocks share one
   * unverifiable entry (block_index = the first of them), and an unterminated last block keeps its own entry.
   */
  'checks': (_verdict_v1_BlockCheck__Output)[];
  /**
   * The optional local second opinion, present only when one was asked for and gave a usable answer.
   */
  'secondOpinion': (_verdict_v1_SecondOpinion__Output | null);
  /**
   * One entry per tool call of the turn, in order (including calls found left in the text as markup).
   */
  'toolChecks': (_verdict_v1_ToolCallCheck__Output)[];
}
