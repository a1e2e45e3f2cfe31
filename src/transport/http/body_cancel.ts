/**
 * Noticing that a client stopped reading a response: the body is wrapped so
 * that a cancel from the consumer side (the client closed the stream or the
 * connection, or the unread bound closed it) runs `onCancel` once. A body that
 * ends normally never runs it.
 *
 * @module
 */

/** `response` with a body whose cancellation runs `onCancel`. */
export function onBodyCancel(response: Response, onCancel: () => void): Response {
  const body = response.body;
  if (body === null) return response;
  const reader = body.getReader();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        controller.error(error);
      }
    },
    cancel(reason) {
      onCancel();
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
  return new Response(stream, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
