// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/validation"
export * from "npm:@modelcontextprotocol/sdk@1.32.2/validation";
