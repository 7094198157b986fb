// Original file: verdict/v1/verdict.proto

import type { Value as _google_protobuf_Value, Value__Output as _google_protobuf_Value__Output } from '../../google/protobuf/Value';

/**
 * ConvergenceConfig configures convergence.
 */
export interface ConvergenceConfig {
  /**
   * The target: a number, or a string that is interpolated. Required.
   */
  'target'?: (_google_protobuf_Value | null);
  /**
   * Distance from the target that counts as reached: a number or an interpolated string. Default 0.
   */
  'tolerance'?: (_google_protobuf_Value | null);
  /**
   * An ${...} expression for the previous value; without it the verdict is never `stall`.
   */
  'previous'?: (string);
  /**
   * minimize (default) or maximize.
   */
  'direction'?: (string);
  '_previous'?: "previous";
  '_direction'?: "direction";
}

/**
 * ConvergenceConfig configures convergence.
 */
export interface ConvergenceConfig__Output {
  /**
   * The target: a number, or a string that is interpolated. Required.
   */
  'target': (_google_protobuf_Value__Output | null);
  /**
   * Distance from the target that counts as reached: a number or an interpolated string. Default 0.
   */
  'tolerance': (_google_protobuf_Value__Output | null);
  /**
   * An ${...} expression for the previous value; without it the verdict is never `stall`.
   */
  'previous'?: (string);
  /**
   * minimize (default) or maximize.
   */
  'direction'?: (string);
  '_previous'?: "previous";
  '_direction'?: "direction";
}
