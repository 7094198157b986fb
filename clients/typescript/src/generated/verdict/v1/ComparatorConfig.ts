// Original file: verdict/v1/verdict.proto

import type { JudgeMember as _verdict_v1_JudgeMember, JudgeMember__Output as _verdict_v1_JudgeMember__Output } from '../../verdict/v1/JudgeMember';

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
  /**
   * A panel of judges asked concurrently instead of the one judge host; each member's ruling is cached under its
   * own key and listed in the details. Empty: the server's judge host (or the panel `judge` names).
   */
  'judges'?: (_verdict_v1_JudgeMember)[];
  /**
   * How the panel's votes decide: "majority" (default), "unanimous" or a number k (at least k agreeing votes),
   * counted over the members that answered; too few answers make the verdict `error`.
   */
  'quorum'?: (string);
  /**
   * A judge or panel named in the server's judge_panels_file (e.g. "panel-a"), instead of `judges`.
   */
  'judge'?: (string);
  /**
   * Ask each judge this many times and take the majority, the spread reported (self-consistency). Default 1.
   */
  'samples'?: (number);
  /**
   * What a panel without a winning verdict gives: "error" (default), "cautious" (the evaluator's failing verdict)
   * or "first" (the vote of the first listed member that answered).
   */
  'tie'?: (string);
  '_prompt'?: "prompt";
  '_baselinePath'?: "baselinePath";
  '_baseline'?: "baseline";
  '_minPairs'?: "minPairs";
  '_model'?: "model";
  '_quorum'?: "quorum";
  '_judge'?: "judge";
  '_samples'?: "samples";
  '_tie'?: "tie";
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
  /**
   * A panel of judges asked concurrently instead of the one judge host; each member's ruling is cached under its
   * own key and listed in the details. Empty: the server's judge host (or the panel `judge` names).
   */
  'judges': (_verdict_v1_JudgeMember__Output)[];
  /**
   * How the panel's votes decide: "majority" (default), "unanimous" or a number k (at least k agreeing votes),
   * counted over the members that answered; too few answers make the verdict `error`.
   */
  'quorum'?: (string);
  /**
   * A judge or panel named in the server's judge_panels_file (e.g. "panel-a"), instead of `judges`.
   */
  'judge'?: (string);
  /**
   * Ask each judge this many times and take the majority, the spread reported (self-consistency). Default 1.
   */
  'samples'?: (number);
  /**
   * What a panel without a winning verdict gives: "error" (default), "cautious" (the evaluator's failing verdict)
   * or "first" (the vote of the first listed member that answered).
   */
  'tie'?: (string);
  '_prompt'?: "prompt";
  '_baselinePath'?: "baselinePath";
  '_baseline'?: "baseline";
  '_minPairs'?: "minPairs";
  '_model'?: "model";
  '_quorum'?: "quorum";
  '_judge'?: "judge";
  '_samples'?: "samples";
  '_tie'?: "tie";
}
