// Original file: verdict/v1/verdict.proto

import type { ContractPair as _verdict_v1_ContractPair, ContractPair__Output as _verdict_v1_ContractPair__Output } from '../../verdict/v1/ContractPair';

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
}
