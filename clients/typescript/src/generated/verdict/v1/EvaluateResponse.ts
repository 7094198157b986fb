// Original file: verdict/v1/verdict.proto

import type { Struct as _google_protobuf_Struct, Struct__Output as _google_protobuf_Struct__Output } from '../../google/protobuf/Struct';

/**
 * EvaluateResponse is the routing verdict for one loop step.
 */
export interface EvaluateResponse {
  /**
   * The routing key. Case-sensitive; the empty string is a legal classify verdict.
   */
  'verdict'?: (string);
  /**
   * Evaluator-specific details, with the keys the little-loops reference returns.
   */
  'details'?: (_google_protobuf_Struct | null);
  /**
   * The state token to send with the next call of the same evaluator in the same loop. Empty for stateless types.
   */
  'state'?: (Buffer | Uint8Array | string);
}

/**
 * EvaluateResponse is the routing verdict for one loop step.
 */
export interface EvaluateResponse__Output {
  /**
   * The routing key. Case-sensitive; the empty string is a legal classify verdict.
   */
  'verdict': (string);
  /**
   * Evaluator-specific details, with the keys the little-loops reference returns.
   */
  'details': (_google_protobuf_Struct__Output | null);
  /**
   * The state token to send with the next call of the same evaluator in the same loop. Empty for stateless types.
   */
  'state': (Buffer);
}
