// Original file: verdict/v1/verdict.proto


/**
 * ActionStallConfig configures action_stall.
 */
export interface ActionStallConfig {
  /**
   * Keys whose values are tracked: a dotted ${...} path, or a bare key looked up in context, captured, prev and
   * result. Default ["action"].
   */
  'track'?: (string)[];
  /**
   * Number of identical calls that means stalled. Default 2, at least 1.
   */
  'maxRepeat'?: (number);
  '_maxRepeat'?: "maxRepeat";
}

/**
 * ActionStallConfig configures action_stall.
 */
export interface ActionStallConfig__Output {
  /**
   * Keys whose values are tracked: a dotted ${...} path, or a bare key looked up in context, captured, prev and
   * result. Default ["action"].
   */
  'track': (string)[];
  /**
   * Number of identical calls that means stalled. Default 2, at least 1.
   */
  'maxRepeat'?: (number);
  '_maxRepeat'?: "maxRepeat";
}
