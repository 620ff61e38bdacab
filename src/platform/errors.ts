import type { ContentfulStatusCode } from "hono/utils/http-status";

/** An error answered with the error envelope: {code, error, errors?} (docs/api.md, "Conventions"). */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly errors?: string[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export type Envelope = { code: number; error: string; errors?: string[] };

export function envelope(status: number, message: string, errors?: string[]): Envelope {
  return errors?.length ? { code: status, error: message, errors } : { code: status, error: message };
}

/**
 * A write batch lost its race for fresh data on every attempt (it was rolled back each time):
 * nothing was written, and the same request may simply be sent again.
 */
export const changedMeanwhile = (what: string) =>
  new ApiError(
    503,
    `${what} kept changing while this request was applied; nothing was written, retry shortly`,
    undefined,
    { "Retry-After": "1" },
  );
