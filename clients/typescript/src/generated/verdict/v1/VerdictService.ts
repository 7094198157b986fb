// Original file: verdict/v1/verdict.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { BatchEvaluateRequest as _verdict_v1_BatchEvaluateRequest, BatchEvaluateRequest__Output as _verdict_v1_BatchEvaluateRequest__Output } from '../../verdict/v1/BatchEvaluateRequest';
import type { BatchEvaluateResponse as _verdict_v1_BatchEvaluateResponse, BatchEvaluateResponse__Output as _verdict_v1_BatchEvaluateResponse__Output } from '../../verdict/v1/BatchEvaluateResponse';
import type { BatchVerifyResponsesRequest as _verdict_v1_BatchVerifyResponsesRequest, BatchVerifyResponsesRequest__Output as _verdict_v1_BatchVerifyResponsesRequest__Output } from '../../verdict/v1/BatchVerifyResponsesRequest';
import type { BatchVerifyResponsesResponse as _verdict_v1_BatchVerifyResponsesResponse, BatchVerifyResponsesResponse__Output as _verdict_v1_BatchVerifyResponsesResponse__Output } from '../../verdict/v1/BatchVerifyResponsesResponse';
import type { EvaluateRequest as _verdict_v1_EvaluateRequest, EvaluateRequest__Output as _verdict_v1_EvaluateRequest__Output } from '../../verdict/v1/EvaluateRequest';
import type { EvaluateResponse as _verdict_v1_EvaluateResponse, EvaluateResponse__Output as _verdict_v1_EvaluateResponse__Output } from '../../verdict/v1/EvaluateResponse';
import type { ListEvaluatorsRequest as _verdict_v1_ListEvaluatorsRequest, ListEvaluatorsRequest__Output as _verdict_v1_ListEvaluatorsRequest__Output } from '../../verdict/v1/ListEvaluatorsRequest';
import type { ListEvaluatorsResponse as _verdict_v1_ListEvaluatorsResponse, ListEvaluatorsResponse__Output as _verdict_v1_ListEvaluatorsResponse__Output } from '../../verdict/v1/ListEvaluatorsResponse';
import type { VerifyResponseRequest as _verdict_v1_VerifyResponseRequest, VerifyResponseRequest__Output as _verdict_v1_VerifyResponseRequest__Output } from '../../verdict/v1/VerifyResponseRequest';
import type { VerifyResponseResponse as _verdict_v1_VerifyResponseResponse, VerifyResponseResponse__Output as _verdict_v1_VerifyResponseResponse__Output } from '../../verdict/v1/VerifyResponseResponse';

/**
 * VerdictService is stateless: anything that must survive between calls (stall counters, score history) travels in
 * the request and response, so any replica can answer any call and a retried call gives the same answer.
 */
export interface VerdictServiceClient extends grpc.Client {
  /**
   * BatchEvaluate runs many evaluations in one call, with the same per-item results, limits and shared deadline as
   * BatchVerifyResponses.
   */
  BatchEvaluate(argument: _verdict_v1_BatchEvaluateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_BatchEvaluateResponse__Output>): grpc.ClientUnaryCall;
  BatchEvaluate(argument: _verdict_v1_BatchEvaluateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_verdict_v1_BatchEvaluateResponse__Output>): grpc.ClientUnaryCall;
  BatchEvaluate(argument: _verdict_v1_BatchEvaluateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_BatchEvaluateResponse__Output>): grpc.ClientUnaryCall;
  BatchEvaluate(argument: _verdict_v1_BatchEvaluateRequest, callback: grpc.requestCallback<_verdict_v1_BatchEvaluateResponse__Output>): grpc.ClientUnaryCall;
  /**
   * BatchEvaluate runs many evaluations in one call, with the same per-item results, limits and shared deadline as
   * BatchVerifyResponses.
   */
  batchEvaluate(argument: _verdict_v1_BatchEvaluateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_BatchEvaluateResponse__Output>): grpc.ClientUnaryCall;
  batchEvaluate(argument: _verdict_v1_BatchEvaluateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_verdict_v1_BatchEvaluateResponse__Output>): grpc.ClientUnaryCall;
  batchEvaluate(argument: _verdict_v1_BatchEvaluateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_BatchEvaluateResponse__Output>): grpc.ClientUnaryCall;
  batchEvaluate(argument: _verdict_v1_BatchEvaluateRequest, callback: grpc.requestCallback<_verdict_v1_BatchEvaluateResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * BatchVerifyResponses verifies many completions in one call: one result per item, in the order sent. Items are
   * not atomic: each result is either a response or that item's own error status, so one bad item never fails the
   * rest. The call's deadline is shared by the batch: items not finished when it is about to expire come back as
   * DEADLINE_EXCEEDED, each in its place. Errors for the whole call: INVALID_ARGUMENT when the batch has more items
   * or bytes than the server's max_batch_items / max_batch_bytes; RESOURCE_EXHAUSTED when the server is saturated.
   */
  BatchVerifyResponses(argument: _verdict_v1_BatchVerifyResponsesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_BatchVerifyResponsesResponse__Output>): grpc.ClientUnaryCall;
  BatchVerifyResponses(argument: _verdict_v1_BatchVerifyResponsesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_verdict_v1_BatchVerifyResponsesResponse__Output>): grpc.ClientUnaryCall;
  BatchVerifyResponses(argument: _verdict_v1_BatchVerifyResponsesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_BatchVerifyResponsesResponse__Output>): grpc.ClientUnaryCall;
  BatchVerifyResponses(argument: _verdict_v1_BatchVerifyResponsesRequest, callback: grpc.requestCallback<_verdict_v1_BatchVerifyResponsesResponse__Output>): grpc.ClientUnaryCall;
  /**
   * BatchVerifyResponses verifies many completions in one call: one result per item, in the order sent. Items are
   * not atomic: each result is either a response or that item's own error status, so one bad item never fails the
   * rest. The call's deadline is shared by the batch: items not finished when it is about to expire come back as
   * DEADLINE_EXCEEDED, each in its place. Errors for the whole call: INVALID_ARGUMENT when the batch has more items
   * or bytes than the server's max_batch_items / max_batch_bytes; RESOURCE_EXHAUSTED when the server is saturated.
   */
  batchVerifyResponses(argument: _verdict_v1_BatchVerifyResponsesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_BatchVerifyResponsesResponse__Output>): grpc.ClientUnaryCall;
  batchVerifyResponses(argument: _verdict_v1_BatchVerifyResponsesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_verdict_v1_BatchVerifyResponsesResponse__Output>): grpc.ClientUnaryCall;
  batchVerifyResponses(argument: _verdict_v1_BatchVerifyResponsesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_BatchVerifyResponsesResponse__Output>): grpc.ClientUnaryCall;
  batchVerifyResponses(argument: _verdict_v1_BatchVerifyResponsesRequest, callback: grpc.requestCallback<_verdict_v1_BatchVerifyResponsesResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Evaluate runs one evaluator over one loop step's output and returns the routing verdict.
   * Errors: INVALID_ARGUMENT for a bad evaluator configuration (the field path is in the error details),
   * PERMISSION_DENIED for a workspace outside the configured root, RESOURCE_EXHAUSTED when judges are saturated.
   */
  Evaluate(argument: _verdict_v1_EvaluateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_EvaluateResponse__Output>): grpc.ClientUnaryCall;
  Evaluate(argument: _verdict_v1_EvaluateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_verdict_v1_EvaluateResponse__Output>): grpc.ClientUnaryCall;
  Evaluate(argument: _verdict_v1_EvaluateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_EvaluateResponse__Output>): grpc.ClientUnaryCall;
  Evaluate(argument: _verdict_v1_EvaluateRequest, callback: grpc.requestCallback<_verdict_v1_EvaluateResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Evaluate runs one evaluator over one loop step's output and returns the routing verdict.
   * Errors: INVALID_ARGUMENT for a bad evaluator configuration (the field path is in the error details),
   * PERMISSION_DENIED for a workspace outside the configured root, RESOURCE_EXHAUSTED when judges are saturated.
   */
  evaluate(argument: _verdict_v1_EvaluateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_EvaluateResponse__Output>): grpc.ClientUnaryCall;
  evaluate(argument: _verdict_v1_EvaluateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_verdict_v1_EvaluateResponse__Output>): grpc.ClientUnaryCall;
  evaluate(argument: _verdict_v1_EvaluateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_EvaluateResponse__Output>): grpc.ClientUnaryCall;
  evaluate(argument: _verdict_v1_EvaluateRequest, callback: grpc.requestCallback<_verdict_v1_EvaluateResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * ListEvaluators returns the evaluator catalogue: every type, its fields and its possible verdicts.
   */
  ListEvaluators(argument: _verdict_v1_ListEvaluatorsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_ListEvaluatorsResponse__Output>): grpc.ClientUnaryCall;
  ListEvaluators(argument: _verdict_v1_ListEvaluatorsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_verdict_v1_ListEvaluatorsResponse__Output>): grpc.ClientUnaryCall;
  ListEvaluators(argument: _verdict_v1_ListEvaluatorsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_ListEvaluatorsResponse__Output>): grpc.ClientUnaryCall;
  ListEvaluators(argument: _verdict_v1_ListEvaluatorsRequest, callback: grpc.requestCallback<_verdict_v1_ListEvaluatorsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * ListEvaluators returns the evaluator catalogue: every type, its fields and its possible verdicts.
   */
  listEvaluators(argument: _verdict_v1_ListEvaluatorsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_ListEvaluatorsResponse__Output>): grpc.ClientUnaryCall;
  listEvaluators(argument: _verdict_v1_ListEvaluatorsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_verdict_v1_ListEvaluatorsResponse__Output>): grpc.ClientUnaryCall;
  listEvaluators(argument: _verdict_v1_ListEvaluatorsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_ListEvaluatorsResponse__Output>): grpc.ClientUnaryCall;
  listEvaluators(argument: _verdict_v1_ListEvaluatorsRequest, callback: grpc.requestCallback<_verdict_v1_ListEvaluatorsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * VerifyResponse structurally verifies one model completion: truncation, malformed fenced code, empty answers.
   * Errors: INVALID_ARGUMENT for a malformed request, RESOURCE_EXHAUSTED when the request exceeds the configured
   * size limit or the server is saturated.
   */
  VerifyResponse(argument: _verdict_v1_VerifyResponseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_VerifyResponseResponse__Output>): grpc.ClientUnaryCall;
  VerifyResponse(argument: _verdict_v1_VerifyResponseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_verdict_v1_VerifyResponseResponse__Output>): grpc.ClientUnaryCall;
  VerifyResponse(argument: _verdict_v1_VerifyResponseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_VerifyResponseResponse__Output>): grpc.ClientUnaryCall;
  VerifyResponse(argument: _verdict_v1_VerifyResponseRequest, callback: grpc.requestCallback<_verdict_v1_VerifyResponseResponse__Output>): grpc.ClientUnaryCall;
  /**
   * VerifyResponse structurally verifies one model completion: truncation, malformed fenced code, empty answers.
   * Errors: INVALID_ARGUMENT for a malformed request, RESOURCE_EXHAUSTED when the request exceeds the configured
   * size limit or the server is saturated.
   */
  verifyResponse(argument: _verdict_v1_VerifyResponseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_VerifyResponseResponse__Output>): grpc.ClientUnaryCall;
  verifyResponse(argument: _verdict_v1_VerifyResponseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_verdict_v1_VerifyResponseResponse__Output>): grpc.ClientUnaryCall;
  verifyResponse(argument: _verdict_v1_VerifyResponseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_verdict_v1_VerifyResponseResponse__Output>): grpc.ClientUnaryCall;
  verifyResponse(argument: _verdict_v1_VerifyResponseRequest, callback: grpc.requestCallback<_verdict_v1_VerifyResponseResponse__Output>): grpc.ClientUnaryCall;
  
}

/**
 * VerdictService is stateless: anything that must survive between calls (stall counters, score history) travels in
 * the request and response, so any replica can answer any call and a retried call gives the same answer.
 */
export interface VerdictServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * BatchEvaluate runs many evaluations in one call, with the same per-item results, limits and shared deadline as
   * BatchVerifyResponses.
   */
  BatchEvaluate: grpc.handleUnaryCall<_verdict_v1_BatchEvaluateRequest__Output, _verdict_v1_BatchEvaluateResponse>;
  
  /**
   * BatchVerifyResponses verifies many completions in one call: one result per item, in the order sent. Items are
   * not atomic: each result is either a response or that item's own error status, so one bad item never fails the
   * rest. The call's deadline is shared by the batch: items not finished when it is about to expire come back as
   * DEADLINE_EXCEEDED, each in its place. Errors for the whole call: INVALID_ARGUMENT when the batch has more items
   * or bytes than the server's max_batch_items / max_batch_bytes; RESOURCE_EXHAUSTED when the server is saturated.
   */
  BatchVerifyResponses: grpc.handleUnaryCall<_verdict_v1_BatchVerifyResponsesRequest__Output, _verdict_v1_BatchVerifyResponsesResponse>;
  
  /**
   * Evaluate runs one evaluator over one loop step's output and returns the routing verdict.
   * Errors: INVALID_ARGUMENT for a bad evaluator configuration (the field path is in the error details),
   * PERMISSION_DENIED for a workspace outside the configured root, RESOURCE_EXHAUSTED when judges are saturated.
   */
  Evaluate: grpc.handleUnaryCall<_verdict_v1_EvaluateRequest__Output, _verdict_v1_EvaluateResponse>;
  
  /**
   * ListEvaluators returns the evaluator catalogue: every type, its fields and its possible verdicts.
   */
  ListEvaluators: grpc.handleUnaryCall<_verdict_v1_ListEvaluatorsRequest__Output, _verdict_v1_ListEvaluatorsResponse>;
  
  /**
   * VerifyResponse structurally verifies one model completion: truncation, malformed fenced code, empty answers.
   * Errors: INVALID_ARGUMENT for a malformed request, RESOURCE_EXHAUSTED when the request exceeds the configured
   * size limit or the server is saturated.
   */
  VerifyResponse: grpc.handleUnaryCall<_verdict_v1_VerifyResponseRequest__Output, _verdict_v1_VerifyResponseResponse>;
  
}

export interface VerdictServiceDefinition extends grpc.ServiceDefinition {
  BatchEvaluate: MethodDefinition<_verdict_v1_BatchEvaluateRequest, _verdict_v1_BatchEvaluateResponse, _verdict_v1_BatchEvaluateRequest__Output, _verdict_v1_BatchEvaluateResponse__Output>
  BatchVerifyResponses: MethodDefinition<_verdict_v1_BatchVerifyResponsesRequest, _verdict_v1_BatchVerifyResponsesResponse, _verdict_v1_BatchVerifyResponsesRequest__Output, _verdict_v1_BatchVerifyResponsesResponse__Output>
  Evaluate: MethodDefinition<_verdict_v1_EvaluateRequest, _verdict_v1_EvaluateResponse, _verdict_v1_EvaluateRequest__Output, _verdict_v1_EvaluateResponse__Output>
  ListEvaluators: MethodDefinition<_verdict_v1_ListEvaluatorsRequest, _verdict_v1_ListEvaluatorsResponse, _verdict_v1_ListEvaluatorsRequest__Output, _verdict_v1_ListEvaluatorsResponse__Output>
  VerifyResponse: MethodDefinition<_verdict_v1_VerifyResponseRequest, _verdict_v1_VerifyResponseResponse, _verdict_v1_VerifyResponseRequest__Output, _verdict_v1_VerifyResponseResponse__Output>
}
