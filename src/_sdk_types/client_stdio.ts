// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/stdio"
export * from "npm:@modelcontextprotocol/sdk@1.32.2/client/stdio.js";
