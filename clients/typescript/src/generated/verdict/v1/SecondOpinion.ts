// Original file: verdict/v1/verdict.proto

import type { VerifyVerdict as _verdict_v1_VerifyVerdict, VerifyVerdict__Output as _verdict_v1_VerifyVerdict__Output } from '../../verdict/v1/VerifyVerdict';

/**
 * SecondOpinion is a local judge's reading of a long answer nothing structural could check.
 */
export interface SecondOpinion {
  /**
   * The judge's verdict: VERIFY_VERDICT_OK or VERIFY_VERDICT_MALFORMED.
   */
  'verdict'?: (_verdict_v1_VerifyVerdict);
  /**
   * The judge's reason, at most 120 characters.
   */
  'reason'?: (string);
  /**
   * The host that answered.
   */
  'host'?: (string);
}

/**
 * SecondOpinion is a local judge's reading of a long answer nothing structural could check.
 */
export interface SecondOpinion__Output {
  /**
   * The judge's verdict: VERIFY_VERDICT_OK or VERIFY_VERDICT_MALFORMED.
   */
  'verdict': (_verdict_v1_VerifyVerdict__Output);
  /**
   * The judge's reason, at most 120 characters.
   */
  'reason': (string);
  /**
   * The host that answered.
   */
  'host': (string);
}
