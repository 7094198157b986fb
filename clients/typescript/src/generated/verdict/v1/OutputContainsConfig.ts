// Original file: verdict/v1/verdict.proto


/**
 * OutputContainsConfig configures output_contains.
 */
export interface OutputContainsConfig {
  /**
   * A regular expression searched in the output (an invalid one is used as a substring). Required.
   */
  'pattern'?: (string);
  /**
   * Invert the result.
   */
  'negate'?: (boolean);
  /**
   * Substrings that turn an un-negated `no` into `error` (auth failures printed with exit code 0).
   */
  'errorPatterns'?: (string)[];
}

/**
 * OutputContainsConfig configures output_contains.
 */
export interface OutputContainsConfig__Output {
  /**
   * A regular expression searched in the output (an invalid one is used as a substring). Required.
   */
  'pattern': (string);
  /**
   * Invert the result.
   */
  'negate': (boolean);
  /**
   * Substrings that turn an un-negated `no` into `error` (auth failures printed with exit code 0).
   */
  'errorPatterns': (string)[];
}
