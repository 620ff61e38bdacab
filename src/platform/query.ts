import { z } from "zod";
import { ApiError } from "./errors";
import { issuesToErrors } from "./fields";

// Query strings of the modelled-dialect lists (docs/modelled-reads.md, "Modelled reads"). A parameter the operation
// does not define is refused rather than dropped, so that a misspelt filter never looks like an
// answer to it; a parameter given twice is refused too (which one would win is a guess).

/** The query's parameters, each given at most once and each one the operation defines. */
export function strictQuery(url: string, known: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of new URL(url).searchParams) {
    if (!known.includes(name)) {
      throw new ApiError(400, `unknown query parameter: ${name}`, [`${name}: unknown query parameter`]);
    }
    if (Object.hasOwn(out, name)) {
      throw new ApiError(400, `query parameter given more than once: ${name}`, [`${name}: given more than once`]);
    }
    out[name] = value;
  }
  return out;
}

/** Validates the parameters; a failure is 400 naming each bad one. */
export function parseQuery<S extends z.ZodType>(schema: S, values: Record<string, string>): z.output<S> {
  const r = schema.safeParse(values);
  if (!r.success) throw new ApiError(400, "invalid query", issuesToErrors(r.error.issues));
  return r.data;
}

// An empty value is an error, never "no filter": `?sku=` must not answer the whole list.
const NOT_EMPTY = "must not be empty";
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Text, trimmed, 1 to `max` characters, no control characters. */
export const text = (max: number) =>
  z
    .string()
    .trim()
    .min(1, { error: NOT_EMPTY })
    .max(max, { error: `must be at most ${max} characters` })
    .refine((s) => !CONTROL.test(s), { error: "must not contain control characters" });

/** `true`/`false` as clients send them (also 1/0), any case. */
export const boolText = z
  .string()
  .trim()
  .toLowerCase()
  .refine((s) => s === "true" || s === "false" || s === "1" || s === "0", { error: "must be true or false" })
  .transform((s) => s === "true" || s === "1");

/** A whole number from min to max, in plain digits (a minus sign only for negative numbers). */
export const whole = (min: number, max: number, what = `must be a whole number from ${min} to ${max}`) =>
  z
    .string()
    .trim()
    .min(1, { error: NOT_EMPTY })
    .transform((s, ctx) => {
      const n = /^-?\d{1,16}$/.test(s) ? Number(s) : Number.NaN;
      if (!Number.isSafeInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: "custom", message: what, input: s });
        return z.NEVER;
      }
      return n;
    });

/** A time as UNIX seconds (the modelled API's date filters), returned as epoch milliseconds. */
export const unixSeconds = whole(0, 253_402_300_799, "must be a time in UNIX seconds").transform((s) => s * 1000);

/** Anything: parameters the modelled API defines that mean nothing here (apps_load). */
export const ignored = z.string();

/** Placeholders ?1, ?2, ... for values, so that two statements of a batch can share one parameter list. */
export class Params {
  readonly values: unknown[] = [];
  add(v: unknown) {
    this.values.push(v);
    return `?${this.values.length}`;
  }
}

/** `Link: <url>; rel="next"` (RFC 8288) for the page after this one: the request's URL with `set`. */
export function nextLink(url: string, set: Record<string, string>, drop: string[] = []): string {
  const u = new URL(url);
  for (const name of drop) u.searchParams.delete(name);
  for (const [name, value] of Object.entries(set)) u.searchParams.set(name, value);
  return `<${u.toString()}>; rel="next"`;
}

/**
 * Search text for `instr(lower(column), ?) > 0`: a substring match, case-insensitive for ASCII like
 * SQLite's lower(). Not LIKE: D1 refuses LIKE patterns over 50 bytes, and instr has no wildcards to escape.
 */
export const searchText = (s: string) => s.replace(/[A-Z]/g, (ch) => ch.toLowerCase());

/** "YYYY-MM-DD HH:MM:SS" in UTC, the modelled API's date format; "" for no time. */
export function dateText(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "";
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

/** Minor units as decimal text with two decimals (14895 -> "148.95"), without float rounding. */
export function moneyText(cents: number): string {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}
