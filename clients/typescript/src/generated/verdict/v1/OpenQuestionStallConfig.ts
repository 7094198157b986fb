// Original file: verdict/v1/verdict.proto


/**
 * OpenQuestionStallConfig configures open_question_stall.
 */
export interface OpenQuestionStallConfig {
  /**
   * Number of calls without a new lowest count that means stalled. Default 1, at least 1.
   */
  'maxStall'?: (number);
  /**
   * A count must fall below the lowest by more than epsilon to count as progress. Default 0.5, at least 0.
   */
  'epsilon'?: (number | string);
  '_maxStall'?: "maxStall";
  '_epsilon'?: "epsilon";
}

/**
 * OpenQuestionStallConfig configures open_question_stall.
 */
export interface OpenQuestionStallConfig__Output {
  /**
   * Number of calls without a new lowest count that means stalled. Default 1, at least 1.
   */
  'maxStall'?: (number);
  /**
   * A count must fall below the lowest by more than epsilon to count as progress. Default 0.5, at least 0.
   */
  'epsilon'?: (number);
  '_maxStall'?: "maxStall";
  '_epsilon'?: "epsilon";
}
