import type { Context } from "hono";
import type { AppEnv } from "../env";
import { answerBytes, carriedJson } from "./d1";

// A page too large to hold whole (docs/modelled-reads.md, "Paging"): SQLite builds it in
// chunks, one D1 round trip each, and each chunk's bytes are written to the response as it
// arrives, then let go. The next chunk is read only when the client has taken the last one, so
// the isolate holds about one chunk at a time however large the page.

/**
 * An answer of carried texts (src/platform/d1.ts) in chunks: the first, already read, and
 * `next`, which reads the following one (undefined once there is none). Without `next` the
 * answer is the first chunk alone.
 */
export type CarriedChunks = {
  first: readonly string[];
  next?: () => Promise<readonly string[] | undefined>;
};

/** The body of `chunks`: each chunk written as its bytes, read when the reader asks for more. */
export function carriedStream(chunks: CarriedChunks, requestId?: string): ReadableStream<Uint8Array> {
  let first: readonly string[] | undefined = chunks.first;
  const next = chunks.next;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let texts: readonly string[] | undefined;
        try {
          texts = first ?? (await next?.());
        } catch (e) {
          // The status line has gone: the root error handler never sees this one.
          const error = e instanceof Error ? e.message : String(e);
          console.error(JSON.stringify({ level: "error", msg: "streamed answer broke off", requestId, error }));
          throw e;
        }
        first = undefined;
        if (!texts) return controller.close();
        // A copy: answerBytes is a view of memory the next chunk writes over.
        controller.enqueue(answerBytes(texts).slice());
      },
    },
    // Nothing read ahead: a chunk is read from D1 only once the one before it was taken.
    { highWaterMark: 0 },
  );
}

/**
 * A JSON answer of carried chunks: one body with its length when there is one chunk, else a
 * stream. A chunk that fails to arrive once the answer has started ends the stream with an error,
 * so the client sees a broken answer, never a short one that parses.
 */
export function carriedChunks(
  c: Context<AppEnv>,
  chunks: CarriedChunks,
  headers: Record<string, string> = {},
): Response {
  if (!chunks.next) return carriedJson(c, chunks.first, 200, headers);
  c.set("streamed", true);
  return c.body(carriedStream(chunks, c.var.requestId), 200, { "Content-Type": "application/json", ...headers });
}
