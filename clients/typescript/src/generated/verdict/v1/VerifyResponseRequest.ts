// Original file: verdict/v1/verdict.proto

import type { ToolCall as _verdict_v1_ToolCall, ToolCall__Output as _verdict_v1_ToolCall__Output } from '../../verdict/v1/ToolCall';
import type { ToolDefinition as _verdict_v1_ToolDefinition, ToolDefinition__Output as _verdict_v1_ToolDefinition__Output } from '../../verdict/v1/ToolDefinition';

/**
 * VerifyResponseRequest carries one completion and the envelope facts the provider returned with it.
 */
export interface VerifyResponseRequest {
  /**
   * The completion text exactly as the model returned it.
   */
  'text'?: (string);
  /**
   * The provider's finish reason ("stop", "length", "max_tokens", "MAX_TOKENS", "max_output_tokens", "tool_calls",
   * ...). Every provider's spelling of "ran out of budget" counts as truncation.
   */
  'finishReason'?: (string);
  /**
   * True when the turn called tools. With no tool_calls (or message_json) given, such a turn keeps the old
   * exemption: nothing is checked. With the calls given, each call is checked and the text is checked as prose.
   */
  'hasToolCalls'?: (boolean);
  /**
   * Completion tokens the provider reported; gates the optional second opinion. Zero when unknown.
   */
  'completionTokens'?: (number);
  /**
   * The user's request, shown to the optional second-opinion judge. Never checked itself.
   */
  'requestText'?: (string);
  /**
   * A label naming the model that produced the completion. Used as a metric label only when it is on the server's
   * allow-list; never interpreted.
   */
  'model'?: (string);
  /**
   * The tool calls the model made in this turn, each checked against `tools` (or tools_json).
   */
  'toolCalls'?: (_verdict_v1_ToolCall)[];
  /**
   * The tools declared to the model for this turn; a call is checked against its tool's parameter schema.
   */
  'tools'?: (_verdict_v1_ToolDefinition)[];
  /**
   * Instead of text / finish_reason / tool_calls: the provider's whole response or its assistant message as JSON,
   * in the OpenAI Chat Completions, OpenAI Responses, Anthropic Messages or Gemini generateContent shape (detected).
   */
  'messageJson'?: (string);
  /**
   * Instead of tools: the `tools` array exactly as sent to the provider (OpenAI, Anthropic or Gemini shape).
   */
  'toolsJson'?: (string);
}

/**
 * VerifyResponseRequest carries one completion and the envelope facts the provider returned with it.
 */
export interface VerifyResponseRequest__Output {
  /**
   * The completion text exactly as the model returned it.
   */
  'text': (string);
  /**
   * The provider's finish reason ("stop", "length", "max_tokens", "MAX_TOKENS", "max_output_tokens", "tool_calls",
   * ...). Every provider's spelling of "ran out of budget" counts as truncation.
   */
  'finishReason': (string);
  /**
   * True when the turn called tools. With no tool_calls (or message_json) given, such a turn keeps the old
   * exemption: nothing is checked. With the calls given, each call is checked and the text is checked as prose.
   */
  'hasToolCalls': (boolean);
  /**
   * Completion tokens the provider reported; gates the optional second opinion. Zero when unknown.
   */
  'completionTokens': (number);
  /**
   * The user's request, shown to the optional second-opinion judge. Never checked itself.
   */
  'requestText': (string);
  /**
   * A label naming the model that produced the completion. Used as a metric label only when it is on the server's
   * allow-list; never interpreted.
   */
  'model': (string);
  /**
   * The tool calls the model made in this turn, each checked against `tools` (or tools_json).
   */
  'toolCalls': (_verdict_v1_ToolCall__Output)[];
  /**
   * The tools declared to the model for this turn; a call is checked against its tool's parameter schema.
   */
  'tools': (_verdict_v1_ToolDefinition__Output)[];
  /**
   * Instead of text / finish_reason / tool_calls: the provider's whole response or its assistant message as JSON,
   * in the OpenAI Chat Completions, OpenAI Responses, Anthropic Messages or Gemini generateContent shape (detected).
   */
  'messageJson': (string);
  /**
   * Instead of tools: the `tools` array exactly as sent to the provider (OpenAI, Anthropic or Gemini shape).
   */
  'toolsJson': (string);
}
