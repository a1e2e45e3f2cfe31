// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/mcp"
export * from "npm:@modelcontextprotocol/sdk@1.32.2/server/mcp.js";
