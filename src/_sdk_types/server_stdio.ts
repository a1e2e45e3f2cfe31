// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/stdio"
export * from "npm:@modelcontextprotocol/sdk@1.32.2/server/stdio.js";
