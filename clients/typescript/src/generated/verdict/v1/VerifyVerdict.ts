// Original file: verdict/v1/verdict.proto

/**
 * VerifyVerdict is the outcome of a structural verification.
 */
export const VerifyVerdict = {
  /**
   * Never returned; the zero value of the enum.
   */
  VERIFY_VERDICT_UNSPECIFIED: 'VERIFY_VERDICT_UNSPECIFIED',
  /**
   * Every checkable block parsed.
   */
  VERIFY_VERDICT_OK: 'VERIFY_VERDICT_OK',
  /**
   * The completion was cut off: a length finish reason, an unterminated fence, an unterminated here-document.
   */
  VERIFY_VERDICT_TRUNCATED: 'VERIFY_VERDICT_TRUNCATED',
  /**
   * The completion is broken: empty, or a block its language's parser rejects.
   */
  VERIFY_VERDICT_MALFORMED: 'VERIFY_VERDICT_MALFORMED',
  /**
   * Nothing could be checked. Not a failure.
   */
  VERIFY_VERDICT_UNVERIFIABLE: 'VERIFY_VERDICT_UNVERIFIABLE',
} as const;

/**
 * VerifyVerdict is the outcome of a structural verification.
 */
export type VerifyVerdict =
  /**
   * Never returned; the zero value of the enum.
   */
  | 'VERIFY_VERDICT_UNSPECIFIED'
  | 0
  /**
   * Every checkable block parsed.
   */
  | 'VERIFY_VERDICT_OK'
  | 1
  /**
   * The completion was cut off: a length finish reason, an unterminated fence, an unterminated here-document.
   */
  | 'VERIFY_VERDICT_TRUNCATED'
  | 2
  /**
   * The completion is broken: empty, or a block its language's parser rejects.
   */
  | 'VERIFY_VERDICT_MALFORMED'
  | 3
  /**
   * Nothing could be checked. Not a failure.
   */
  | 'VERIFY_VERDICT_UNVERIFIABLE'
  | 4

/**
 * VerifyVerdict is the outcome of a structural verification.
 */
export type VerifyVerdict__Output = typeof VerifyVerdict[keyof typeof VerifyVerdict]
