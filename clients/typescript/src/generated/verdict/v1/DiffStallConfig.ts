// Original file: verdict/v1/verdict.proto


/**
 * DiffStallConfig configures diff_stall.
 */
export interface DiffStallConfig {
  /**
   * Paths given to `git diff --stat -- <scope>`; the whole tree when empty.
   */
  'scope'?: (string)[];
  /**
   * Number of unchanged diffs that means stalled. Default 1, at least 1.
   */
  'maxStall'?: (number);
  '_maxStall'?: "maxStall";
}

/**
 * DiffStallConfig configures diff_stall.
 */
export interface DiffStallConfig__Output {
  /**
   * Paths given to `git diff --stat -- <scope>`; the whole tree when empty.
   */
  'scope': (string)[];
  /**
   * Number of unchanged diffs that means stalled. Default 1, at least 1.
   */
  'maxStall'?: (number);
  '_maxStall'?: "maxStall";
}
