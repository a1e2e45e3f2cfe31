// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/experimental/tasks/interfaces"
export * from "npm:@modelcontextprotocol/sdk@1.32.2/experimental/tasks/interfaces.js";
