// Original file: verdict/v1/verdict.proto


/**
 * ScoreStallConfig configures score_stall.
 */
export interface ScoreStallConfig {
  /**
   * Number of calls without a new best score that means stalled. Default 1, at least 1.
   */
  'maxStall'?: (number);
  /**
   * A score must beat the best by more than epsilon to count as progress. Default 0.5, at least 0.
   */
  'epsilon'?: (number | string);
  '_maxStall'?: "maxStall";
  '_epsilon'?: "epsilon";
}

/**
 * ScoreStallConfig configures score_stall.
 */
export interface ScoreStallConfig__Output {
  /**
   * Number of calls without a new best score that means stalled. Default 1, at least 1.
   */
  'maxStall'?: (number);
  /**
   * A score must beat the best by more than epsilon to count as progress. Default 0.5, at least 0.
   */
  'epsilon'?: (number);
  '_maxStall'?: "maxStall";
  '_epsilon'?: "epsilon";
}
