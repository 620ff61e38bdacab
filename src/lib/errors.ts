import type { ContentfulStatusCode } from "hono/utils/http-status";

/** An error answered with the contract's envelope: {code, error, errors?} (contract 1). */
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

/** The database could not be reached or failed mid-request: the client may retry (issue 5). */
export class Unavailable extends ApiError {
  constructor() {
    super(503, "the database is unavailable, retry shortly", undefined, { "Retry-After": "1" });
  }
}
