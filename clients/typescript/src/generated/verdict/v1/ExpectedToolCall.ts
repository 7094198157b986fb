// Original file: verdict/v1/verdict.proto


/**
 * ExpectedToolCall is one tool call a trajectory expects.
 */
export interface ExpectedToolCall {
  /**
   * The function's name. Required.
   */
  'name'?: (string);
  /**
   * The expected arguments as JSON text (an object); unset means the arguments are not compared.
   */
  'arguments'?: (string);
  /**
   * Per-argument overrides of the comparison mode (exact, canonical, subset, ignore), by top-level argument name.
   */
  'argumentModes'?: ({[key: string]: string});
  '_arguments'?: "arguments";
}

/**
 * ExpectedToolCall is one tool call a trajectory expects.
 */
export interface ExpectedToolCall__Output {
  /**
   * The function's name. Required.
   */
  'name': (string);
  /**
   * The expected arguments as JSON text (an object); unset means the arguments are not compared.
   */
  'arguments'?: (string);
  /**
   * Per-argument overrides of the comparison mode (exact, canonical, subset, ignore), by top-level argument name.
   */
  'argumentModes': ({[key: string]: string});
  '_arguments'?: "arguments";
}
