/**
 * The SDK's Streamable HTTP transport, with a record of the requests it has
 * not answered yet (see `../pending_requests.ts`): the route refuses a
 * duplicate id before the SDK sees it, and a closing session waits for its
 * answers to be written before its streams end.
 *
 * @module
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { PendingRequests, responseIdOf } from "../pending_requests.ts";

type SendArgs = Parameters<WebStandardStreamableHTTPServerTransport["send"]>;

/** A transport that knows which requests still await their answer. */
export class TrackedHttpTransport extends WebStandardStreamableHTTPServerTransport {
  /** Requests received and not yet answered. */
  readonly pending: PendingRequests = new PendingRequests();

  override async send(...[message, options]: SendArgs): Promise<void> {
    const id = responseIdOf(message);
    try {
      await super.send(message, options);
    } finally {
      // Written or not (the stream may be gone), the request is answered.
      if (id !== null) this.pending.settle(id);
    }
  }
}
