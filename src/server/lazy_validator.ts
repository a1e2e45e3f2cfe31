/**
 * The JSON Schema validator the MCP SDK's server keeps, made on its first
 * use. The SDK makes one (an ajv instance) with every server; only a form
 * elicitation's answer is ever checked with it (an approval asked of the
 * client), and making one took 4 to 7 ms of a cold process (x0.996 of a
 * whole start, paired: little, but work no start needs).
 *
 * @module
 */
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from "@modelcontextprotocol/sdk/validation";

/** The SDK's ajv validator, made when a schema is first to be checked. */
export class LazyJsonSchemaValidator implements jsonSchemaValidator {
  #inner: AjvJsonSchemaValidator | null = null;

  /** The SDK's validator for `schema`. */
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    this.#inner ??= new AjvJsonSchemaValidator();
    return this.#inner.getValidator<T>(schema);
  }
}
