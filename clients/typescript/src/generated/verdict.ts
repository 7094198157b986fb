import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { Any as _google_protobuf_Any, Any__Output as _google_protobuf_Any__Output } from './google/protobuf/Any';
import type { ListValue as _google_protobuf_ListValue, ListValue__Output as _google_protobuf_ListValue__Output } from './google/protobuf/ListValue';
import type { Struct as _google_protobuf_Struct, Struct__Output as _google_protobuf_Struct__Output } from './google/protobuf/Struct';
import type { Value as _google_protobuf_Value, Value__Output as _google_protobuf_Value__Output } from './google/protobuf/Value';
import type { Status as _google_rpc_Status, Status__Output as _google_rpc_Status__Output } from './google/rpc/Status';
import type { ActionStallConfig as _verdict_v1_ActionStallConfig, ActionStallConfig__Output as _verdict_v1_ActionStallConfig__Output } from './verdict/v1/ActionStallConfig';
import type { BatchEvaluateRequest as _verdict_v1_BatchEvaluateRequest, BatchEvaluateRequest__Output as _verdict_v1_BatchEvaluateRequest__Output } from './verdict/v1/BatchEvaluateRequest';
import type { BatchEvaluateResponse as _verdict_v1_BatchEvaluateResponse, BatchEvaluateResponse__Output as _verdict_v1_BatchEvaluateResponse__Output } from './verdict/v1/BatchEvaluateResponse';
import type { BatchVerifyResponsesRequest as _verdict_v1_BatchVerifyResponsesRequest, BatchVerifyResponsesRequest__Output as _verdict_v1_BatchVerifyResponsesRequest__Output } from './verdict/v1/BatchVerifyResponsesRequest';
import type { BatchVerifyResponsesResponse as _verdict_v1_BatchVerifyResponsesResponse, BatchVerifyResponsesResponse__Output as _verdict_v1_BatchVerifyResponsesResponse__Output } from './verdict/v1/BatchVerifyResponsesResponse';
import type { BlockCheck as _verdict_v1_BlockCheck, BlockCheck__Output as _verdict_v1_BlockCheck__Output } from './verdict/v1/BlockCheck';
import type { ClassifyConfig as _verdict_v1_ClassifyConfig, ClassifyConfig__Output as _verdict_v1_ClassifyConfig__Output } from './verdict/v1/ClassifyConfig';
import type { ComparatorConfig as _verdict_v1_ComparatorConfig, ComparatorConfig__Output as _verdict_v1_ComparatorConfig__Output } from './verdict/v1/ComparatorConfig';
import type { ContractConfig as _verdict_v1_ContractConfig, ContractConfig__Output as _verdict_v1_ContractConfig__Output } from './verdict/v1/ContractConfig';
import type { ContractPair as _verdict_v1_ContractPair, ContractPair__Output as _verdict_v1_ContractPair__Output } from './verdict/v1/ContractPair';
import type { ConvergenceConfig as _verdict_v1_ConvergenceConfig, ConvergenceConfig__Output as _verdict_v1_ConvergenceConfig__Output } from './verdict/v1/ConvergenceConfig';
import type { DiffStallConfig as _verdict_v1_DiffStallConfig, DiffStallConfig__Output as _verdict_v1_DiffStallConfig__Output } from './verdict/v1/DiffStallConfig';
import type { EvaluateRequest as _verdict_v1_EvaluateRequest, EvaluateRequest__Output as _verdict_v1_EvaluateRequest__Output } from './verdict/v1/EvaluateRequest';
import type { EvaluateResponse as _verdict_v1_EvaluateResponse, EvaluateResponse__Output as _verdict_v1_EvaluateResponse__Output } from './verdict/v1/EvaluateResponse';
import type { EvaluateResult as _verdict_v1_EvaluateResult, EvaluateResult__Output as _verdict_v1_EvaluateResult__Output } from './verdict/v1/EvaluateResult';
import type { EvaluatorConfig as _verdict_v1_EvaluatorConfig, EvaluatorConfig__Output as _verdict_v1_EvaluatorConfig__Output } from './verdict/v1/EvaluatorConfig';
import type { EvaluatorField as _verdict_v1_EvaluatorField, EvaluatorField__Output as _verdict_v1_EvaluatorField__Output } from './verdict/v1/EvaluatorField';
import type { EvaluatorInfo as _verdict_v1_EvaluatorInfo, EvaluatorInfo__Output as _verdict_v1_EvaluatorInfo__Output } from './verdict/v1/EvaluatorInfo';
import type { ExitCodeConfig as _verdict_v1_ExitCodeConfig, ExitCodeConfig__Output as _verdict_v1_ExitCodeConfig__Output } from './verdict/v1/ExitCodeConfig';
import type { ExpectedToolCall as _verdict_v1_ExpectedToolCall, ExpectedToolCall__Output as _verdict_v1_ExpectedToolCall__Output } from './verdict/v1/ExpectedToolCall';
import type { HarborScorerConfig as _verdict_v1_HarborScorerConfig, HarborScorerConfig__Output as _verdict_v1_HarborScorerConfig__Output } from './verdict/v1/HarborScorerConfig';
import type { JudgeMember as _verdict_v1_JudgeMember, JudgeMember__Output as _verdict_v1_JudgeMember__Output } from './verdict/v1/JudgeMember';
import type { ListEvaluatorsRequest as _verdict_v1_ListEvaluatorsRequest, ListEvaluatorsRequest__Output as _verdict_v1_ListEvaluatorsRequest__Output } from './verdict/v1/ListEvaluatorsRequest';
import type { ListEvaluatorsResponse as _verdict_v1_ListEvaluatorsResponse, ListEvaluatorsResponse__Output as _verdict_v1_ListEvaluatorsResponse__Output } from './verdict/v1/ListEvaluatorsResponse';
import type { LlmStructuredConfig as _verdict_v1_LlmStructuredConfig, LlmStructuredConfig__Output as _verdict_v1_LlmStructuredConfig__Output } from './verdict/v1/LlmStructuredConfig';
import type { McpResultConfig as _verdict_v1_McpResultConfig, McpResultConfig__Output as _verdict_v1_McpResultConfig__Output } from './verdict/v1/McpResultConfig';
import type { OpenQuestionStallConfig as _verdict_v1_OpenQuestionStallConfig, OpenQuestionStallConfig__Output as _verdict_v1_OpenQuestionStallConfig__Output } from './verdict/v1/OpenQuestionStallConfig';
import type { OutputContainsConfig as _verdict_v1_OutputContainsConfig, OutputContainsConfig__Output as _verdict_v1_OutputContainsConfig__Output } from './verdict/v1/OutputContainsConfig';
import type { OutputJsonConfig as _verdict_v1_OutputJsonConfig, OutputJsonConfig__Output as _verdict_v1_OutputJsonConfig__Output } from './verdict/v1/OutputJsonConfig';
import type { OutputNumericConfig as _verdict_v1_OutputNumericConfig, OutputNumericConfig__Output as _verdict_v1_OutputNumericConfig__Output } from './verdict/v1/OutputNumericConfig';
import type { ScoreStallConfig as _verdict_v1_ScoreStallConfig, ScoreStallConfig__Output as _verdict_v1_ScoreStallConfig__Output } from './verdict/v1/ScoreStallConfig';
import type { SecondOpinion as _verdict_v1_SecondOpinion, SecondOpinion__Output as _verdict_v1_SecondOpinion__Output } from './verdict/v1/SecondOpinion';
import type { ToolCall as _verdict_v1_ToolCall, ToolCall__Output as _verdict_v1_ToolCall__Output } from './verdict/v1/ToolCall';
import type { ToolCallCheck as _verdict_v1_ToolCallCheck, ToolCallCheck__Output as _verdict_v1_ToolCallCheck__Output } from './verdict/v1/ToolCallCheck';
import type { ToolDefinition as _verdict_v1_ToolDefinition, ToolDefinition__Output as _verdict_v1_ToolDefinition__Output } from './verdict/v1/ToolDefinition';
import type { TrajectoryConfig as _verdict_v1_TrajectoryConfig, TrajectoryConfig__Output as _verdict_v1_TrajectoryConfig__Output } from './verdict/v1/TrajectoryConfig';
import type { VerdictServiceClient as _verdict_v1_VerdictServiceClient, VerdictServiceDefinition as _verdict_v1_VerdictServiceDefinition } from './verdict/v1/VerdictService';
import type { VerifierLanguage as _verdict_v1_VerifierLanguage, VerifierLanguage__Output as _verdict_v1_VerifierLanguage__Output } from './verdict/v1/VerifierLanguage';
import type { VerifyResponseRequest as _verdict_v1_VerifyResponseRequest, VerifyResponseRequest__Output as _verdict_v1_VerifyResponseRequest__Output } from './verdict/v1/VerifyResponseRequest';
import type { VerifyResponseResponse as _verdict_v1_VerifyResponseResponse, VerifyResponseResponse__Output as _verdict_v1_VerifyResponseResponse__Output } from './verdict/v1/VerifyResponseResponse';
import type { VerifyResponseResult as _verdict_v1_VerifyResponseResult, VerifyResponseResult__Output as _verdict_v1_VerifyResponseResult__Output } from './verdict/v1/VerifyResponseResult';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  google: {
    protobuf: {
      Any: MessageTypeDefinition<_google_protobuf_Any, _google_protobuf_Any__Output>
      ListValue: MessageTypeDefinition<_google_protobuf_ListValue, _google_protobuf_ListValue__Output>
      NullValue: EnumTypeDefinition
      Struct: MessageTypeDefinition<_google_protobuf_Struct, _google_protobuf_Struct__Output>
      Value: MessageTypeDefinition<_google_protobuf_Value, _google_protobuf_Value__Output>
    }
    rpc: {
      Status: MessageTypeDefinition<_google_rpc_Status, _google_rpc_Status__Output>
    }
  }
  verdict: {
    v1: {
      ActionStallConfig: MessageTypeDefinition<_verdict_v1_ActionStallConfig, _verdict_v1_ActionStallConfig__Output>
      BatchEvaluateRequest: MessageTypeDefinition<_verdict_v1_BatchEvaluateRequest, _verdict_v1_BatchEvaluateRequest__Output>
      BatchEvaluateResponse: MessageTypeDefinition<_verdict_v1_BatchEvaluateResponse, _verdict_v1_BatchEvaluateResponse__Output>
      BatchVerifyResponsesRequest: MessageTypeDefinition<_verdict_v1_BatchVerifyResponsesRequest, _verdict_v1_BatchVerifyResponsesRequest__Output>
      BatchVerifyResponsesResponse: MessageTypeDefinition<_verdict_v1_BatchVerifyResponsesResponse, _verdict_v1_BatchVerifyResponsesResponse__Output>
      BlockCheck: MessageTypeDefinition<_verdict_v1_BlockCheck, _verdict_v1_BlockCheck__Output>
      ClassifyConfig: MessageTypeDefinition<_verdict_v1_ClassifyConfig, _verdict_v1_ClassifyConfig__Output>
      ComparatorConfig: MessageTypeDefinition<_verdict_v1_ComparatorConfig, _verdict_v1_ComparatorConfig__Output>
      ContractConfig: MessageTypeDefinition<_verdict_v1_ContractConfig, _verdict_v1_ContractConfig__Output>
      ContractPair: MessageTypeDefinition<_verdict_v1_ContractPair, _verdict_v1_ContractPair__Output>
      ConvergenceConfig: MessageTypeDefinition<_verdict_v1_ConvergenceConfig, _verdict_v1_ConvergenceConfig__Output>
      DiffStallConfig: MessageTypeDefinition<_verdict_v1_DiffStallConfig, _verdict_v1_DiffStallConfig__Output>
      EvaluateRequest: MessageTypeDefinition<_verdict_v1_EvaluateRequest, _verdict_v1_EvaluateRequest__Output>
      EvaluateResponse: MessageTypeDefinition<_verdict_v1_EvaluateResponse, _verdict_v1_EvaluateResponse__Output>
      EvaluateResult: MessageTypeDefinition<_verdict_v1_EvaluateResult, _verdict_v1_EvaluateResult__Output>
      EvaluatorConfig: MessageTypeDefinition<_verdict_v1_EvaluatorConfig, _verdict_v1_EvaluatorConfig__Output>
      EvaluatorField: MessageTypeDefinition<_verdict_v1_EvaluatorField, _verdict_v1_EvaluatorField__Output>
      EvaluatorInfo: MessageTypeDefinition<_verdict_v1_EvaluatorInfo, _verdict_v1_EvaluatorInfo__Output>
      ExitCodeConfig: MessageTypeDefinition<_verdict_v1_ExitCodeConfig, _verdict_v1_ExitCodeConfig__Output>
      ExpectedToolCall: MessageTypeDefinition<_verdict_v1_ExpectedToolCall, _verdict_v1_ExpectedToolCall__Output>
      HarborScorerConfig: MessageTypeDefinition<_verdict_v1_HarborScorerConfig, _verdict_v1_HarborScorerConfig__Output>
      JudgeMember: MessageTypeDefinition<_verdict_v1_JudgeMember, _verdict_v1_JudgeMember__Output>
      ListEvaluatorsRequest: MessageTypeDefinition<_verdict_v1_ListEvaluatorsRequest, _verdict_v1_ListEvaluatorsRequest__Output>
      ListEvaluatorsResponse: MessageTypeDefinition<_verdict_v1_ListEvaluatorsResponse, _verdict_v1_ListEvaluatorsResponse__Output>
      LlmStructuredConfig: MessageTypeDefinition<_verdict_v1_LlmStructuredConfig, _verdict_v1_LlmStructuredConfig__Output>
      McpResultConfig: MessageTypeDefinition<_verdict_v1_McpResultConfig, _verdict_v1_McpResultConfig__Output>
      OpenQuestionStallConfig: MessageTypeDefinition<_verdict_v1_OpenQuestionStallConfig, _verdict_v1_OpenQuestionStallConfig__Output>
      OutputContainsConfig: MessageTypeDefinition<_verdict_v1_OutputContainsConfig, _verdict_v1_OutputContainsConfig__Output>
      OutputJsonConfig: MessageTypeDefinition<_verdict_v1_OutputJsonConfig, _verdict_v1_OutputJsonConfig__Output>
      OutputNumericConfig: MessageTypeDefinition<_verdict_v1_OutputNumericConfig, _verdict_v1_OutputNumericConfig__Output>
      ScoreStallConfig: MessageTypeDefinition<_verdict_v1_ScoreStallConfig, _verdict_v1_ScoreStallConfig__Output>
      SecondOpinion: MessageTypeDefinition<_verdict_v1_SecondOpinion, _verdict_v1_SecondOpinion__Output>
      ToolCall: MessageTypeDefinition<_verdict_v1_ToolCall, _verdict_v1_ToolCall__Output>
      ToolCallCheck: MessageTypeDefinition<_verdict_v1_ToolCallCheck, _verdict_v1_ToolCallCheck__Output>
      ToolDefinition: MessageTypeDefinition<_verdict_v1_ToolDefinition, _verdict_v1_ToolDefinition__Output>
      TrajectoryConfig: MessageTypeDefinition<_verdict_v1_TrajectoryConfig, _verdict_v1_TrajectoryConfig__Output>
      /**
       * VerdictService is stateless: anything that must survive between calls (stall counters, score history) travels in
       * the request and response, so any replica can answer any call and a retried call gives the same answer.
       */
      VerdictService: SubtypeConstructor<typeof grpc.Client, _verdict_v1_VerdictServiceClient> & { service: _verdict_v1_VerdictServiceDefinition }
      VerifierLanguage: MessageTypeDefinition<_verdict_v1_VerifierLanguage, _verdict_v1_VerifierLanguage__Output>
      VerifyResponseRequest: MessageTypeDefinition<_verdict_v1_VerifyResponseRequest, _verdict_v1_VerifyResponseRequest__Output>
      VerifyResponseResponse: MessageTypeDefinition<_verdict_v1_VerifyResponseResponse, _verdict_v1_VerifyResponseResponse__Output>
      VerifyResponseResult: MessageTypeDefinition<_verdict_v1_VerifyResponseResult, _verdict_v1_VerifyResponseResult__Output>
      VerifyVerdict: EnumTypeDefinition
    }
  }
}

