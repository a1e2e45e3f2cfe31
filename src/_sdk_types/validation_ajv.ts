// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/validation/ajv"
export * from "npm:@modelcontextprotocol/sdk@1.32.2/validation/ajv";
