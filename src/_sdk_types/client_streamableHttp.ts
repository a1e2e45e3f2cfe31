// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/streamableHttp"
export * from "npm:@modelcontextprotocol/sdk@1.32.2/client/streamableHttp.js";
