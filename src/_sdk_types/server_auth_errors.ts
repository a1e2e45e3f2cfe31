// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/auth/errors"
export * from "npm:@modelcontextprotocol/sdk@1.32.2/server/auth/errors.js";
