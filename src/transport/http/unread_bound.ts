/**
 * A bound on the response bytes one connection may leave unread.
 *
 * Threat: a client that sends requests and never reads the answers. The SDK
 * pushes each answer into its stream at once, so without a bound every unread
 * answer stays in memory for as long as the client keeps the socket open.
 * Here the body is pulled from the route eagerly into a queue of at most
 * `maxUnread` bytes; the runtime drains that queue as fast as the socket
 * takes it. When the queue passes the bound the client is not reading: the
 * body is cancelled (which the route sees as the client going away) and
 * `onOverflow` closes the connection.
 *
 * @module
 */

/**
 * Wraps `response` so that its unread body never exceeds `maxUnread` bytes.
 *
 * @param response The route's answer.
 * @param maxUnread The bound; 0 for none.
 * @returns The wrapped answer, and `abandon()` for a client known to be gone.
 * @param onOverflow Called once when the bound is passed.
 */
export function boundUnread(
  response: Response,
  maxUnread: number,
  onOverflow: () => void,
): { readonly response: Response; abandon(reason: string): void } {
  const body = response.body;
  if (body === null) return { response, abandon: () => {} };
  const reader = body.getReader();
  let finished = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      void (async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) {
              finished = true;
              controller.close();
              return;
            }
            controller.enqueue(value);
            if (maxUnread !== 0 && (controller.desiredSize ?? 0) < 0) {
              const error = new Error(`The client left more than ${maxUnread} bytes unread.`);
              controller.error(error);
              await reader.cancel(error).catch(() => {});
              onOverflow();
              return;
            }
          }
        } catch (error) {
          try {
            controller.error(error);
          } catch {
            // already errored or cancelled
          }
        }
      })();
    },
    cancel(reason) {
      finished = true;
      return reader.cancel(reason);
    },
  }, new ByteLengthQueuingStrategy({ highWaterMark: maxUnread === 0 ? 1 : maxUnread }));
  return {
    response: new Response(stream, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    }),
    // The client went away without the runtime noticing on the write side:
    // cancel the route's body so the route sees the stream closed.
    abandon(reason) {
      if (finished) return;
      finished = true;
      void reader.cancel(new Error(reason)).catch(() => {});
    },
  };
}
