// Original file: verdict/v1/verdict.proto


/**
 * ComparatorConfig configures comparator.
 */
export interface ComparatorConfig {
  /**
   * What the outputs are judged against; replaces the default framing.
   */
  'prompt'?: (string);
  /**
   * A directory under the workspace holding the baseline as `output.txt`.
   */
  'baselinePath'?: (string);
  /**
   * The baseline output inline, instead of baseline_path.
   */
  'baseline'?: (string);
  /**
   * Promote the output to baseline when it wins (and bootstrap a missing baseline).
   */
  'autoPromote'?: (boolean);
  /**
   * Number of blind comparisons; at least 1. Default 1.
   */
  'minPairs'?: (number);
  /**
   * The model alias passed to the judge host. Default: the server's judge_model.
   */
  'model'?: (string);
  /**
   * Ask the judge again instead of answering from the ruling cache (to sample several rulings on purpose).
   */
  'fresh'?: (boolean);
  '_prompt'?: "prompt";
  '_baselinePath'?: "baselinePath";
  '_baseline'?: "baseline";
  '_minPairs'?: "minPairs";
  '_model'?: "model";
}

/**
 * ComparatorConfig configures comparator.
 */
export interface ComparatorConfig__Output {
  /**
   * What the outputs are judged against; replaces the default framing.
   */
  'prompt'?: (string);
  /**
   * A directory under the workspace holding the baseline as `output.txt`.
   */
  'baselinePath'?: (string);
  /**
   * The baseline output inline, instead of baseline_path.
   */
  'baseline'?: (string);
  /**
   * Promote the output to baseline when it wins (and bootstrap a missing baseline).
   */
  'autoPromote': (boolean);
  /**
   * Number of blind comparisons; at least 1. Default 1.
   */
  'minPairs'?: (number);
  /**
   * The model alias passed to the judge host. Default: the server's judge_model.
   */
  'model'?: (string);
  /**
   * Ask the judge again instead of answering from the ruling cache (to sample several rulings on purpose).
   */
  'fresh': (boolean);
  '_prompt'?: "prompt";
  '_baselinePath'?: "baselinePath";
  '_baseline'?: "baseline";
  '_minPairs'?: "minPairs";
  '_model'?: "model";
}
