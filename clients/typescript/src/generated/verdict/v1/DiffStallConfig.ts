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
  /**
   * What counts as a change: "content" (default) fingerprints HEAD, the index, tracked content and untracked,
   * non-ignored files; "stat" compares the text of `git diff --stat`, as little-loops does.
   */
  'compare'?: (string);
  '_maxStall'?: "maxStall";
  '_compare'?: "compare";
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
  /**
   * What counts as a change: "content" (default) fingerprints HEAD, the index, tracked content and untracked,
   * non-ignored files; "stat" compares the text of `git diff --stat`, as little-loops does.
   */
  'compare'?: (string);
  '_maxStall'?: "maxStall";
  '_compare'?: "compare";
}
