// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/shared/auth"
export * from "npm:@modelcontextprotocol/sdk@1.32.2/shared/auth.js";
