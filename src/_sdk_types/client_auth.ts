// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/auth"
export * from "npm:@modelcontextprotocol/sdk@1.32.2/client/auth.js";
