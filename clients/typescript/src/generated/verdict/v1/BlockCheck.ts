// Original file: verdict/v1/verdict.proto

import type { VerifyVerdict as _verdict_v1_VerifyVerdict, VerifyVerdict__Output as _verdict_v1_VerifyVerdict__Output } from '../../verdict/v1/VerifyVerdict';

/**
 * BlockCheck is the outcome of checking one fenced block.
 */
export interface BlockCheck {
  /**
   * Zero-based index of the block among the response's fenced blocks.
   */
  'blockIndex'?: (number);
  /**
   * The canonical language the block was checked as ("python", "json", "yaml", "shell", ...), or the lower-cased
   * info-string word when no checker applies, or "?" when the fence had no info string.
   */
  'language'?: (string);
  /**
   * The block's verdict.
   */
  'verdict'?: (_verdict_v1_VerifyVerdict);
  /**
   * Why: the parser's own message for a malformed block, the reason a block is unverifiable.
   */
  'detail'?: (string);
  /**
   * One-based line of the response on which the opening fence stands.
   */
  'line'?: (number);
  /**
   * One-based line of the response the parser blamed, or 0 when there is none.
   */
  'errorLine'?: (number);
}

/**
 * BlockCheck is the outcome of checking one fenced block.
 */
export interface BlockCheck__Output {
  /**
   * Zero-based index of the block among the response's fenced blocks.
   */
  'blockIndex': (number);
  /**
   * The canonical language the block was checked as ("python", "json", "yaml", "shell", ...), or the lower-cased
   * info-string word when no checker applies, or "?" when the fence had no info string.
   */
  'language': (string);
  /**
   * The block's verdict.
   */
  'verdict': (_verdict_v1_VerifyVerdict__Output);
  /**
   * Why: the parser's own message for a malformed block, the reason a block is unverifiable.
   */
  'detail': (string);
  /**
   * One-based line of the response on which the opening fence stands.
   */
  'line': (number);
  /**
   * One-based line of the response the parser blamed, or 0 when there is none.
   */
  'errorLine': (number);
}
