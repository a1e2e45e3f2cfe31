// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/index"
export * from "npm:@modelcontextprotocol/sdk@1.32.2/server/index.js";
