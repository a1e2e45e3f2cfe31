// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/webStandardStreamableHttp"
export * from "npm:@modelcontextprotocol/sdk@1.32.2/server/webStandardStreamableHttp.js";
