// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/types"
export * from "npm:@modelcontextprotocol/sdk@1.32.2/types.js";
