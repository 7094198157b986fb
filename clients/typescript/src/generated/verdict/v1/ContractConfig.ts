// Original file: verdict/v1/verdict.proto

import type { ContractPair as _verdict_v1_ContractPair, ContractPair__Output as _verdict_v1_ContractPair__Output } from '../../verdict/v1/ContractPair';
import type { JudgeMember as _verdict_v1_JudgeMember, JudgeMember__Output as _verdict_v1_JudgeMember__Output } from '../../verdict/v1/JudgeMember';

/**
 * ContractConfig configures contract.
 */
export interface ContractConfig {
  /**
   * The producer/consumer pairs to check. At least one.
   */
  'pairs'?: (_verdict_v1_ContractPair)[];
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
  '_quorum'?: "quorum";
  '_judge'?: "judge";
  '_samples'?: "samples";
  '_tie'?: "tie";
}

/**
 * ContractConfig configures contract.
 */
export interface ContractConfig__Output {
  /**
   * The producer/consumer pairs to check. At least one.
   */
  'pairs': (_verdict_v1_ContractPair__Output)[];
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
  '_quorum'?: "quorum";
  '_judge'?: "judge";
  '_samples'?: "samples";
  '_tie'?: "tie";
}
