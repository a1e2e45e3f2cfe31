// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
export * from "npm:@modelcontextprotocol/sdk@1.32.2/client/index.js";
