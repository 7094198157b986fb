// Original file: verdict/v1/verdict.proto


/**
 * McpResultConfig configures mcp_result. It has no fields.
 */
export interface McpResultConfig {
}

/**
 * McpResultConfig configures mcp_result. It has no fields.
 */
export interface McpResultConfig__Output {
}
