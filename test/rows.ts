import { env } from "cloudflare:workers";

/** The rows D1 reports a request read and wrote, summed over every statement's result. */
export type Rows = { read: number; written: number; unmetered: number };

/**
 * A D1 binding over the real local D1 that sums each result's `meta.rows_read` and
 * `meta.rows_written`, the rows D1 bills and the free plan caps (docs/design.md, "Answers from D1").
 * `first()` is run as `all()` so that its meta is counted; `raw()` returns no meta and is only
 * counted in `unmetered`, so a test that asserts rows also asserts that is 0.
 */
export function rowsD1() {
  const rows: Rows = { read: 0, written: 0, unmetered: 0 };
  const add = <T>(r: D1Result<T>) => {
    rows.read += r.meta.rows_read ?? 0;
    rows.written += r.meta.rows_written ?? 0;
    return r;
  };
  const unwrap = new WeakMap<object, D1PreparedStatement>();
  const wrap = (s: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(s, {
      get(target, prop) {
        if (prop === "bind") return (...args: unknown[]) => wrap(target.bind(...args));
        if (prop === "all" || prop === "run") return async () => add(await target.all());
        if (prop === "first") {
          return async (column?: string) => {
            const row: Record<string, unknown> | undefined = add(await target.all<Record<string, unknown>>())
              .results[0];
            if (row === undefined) return null;
            return column === undefined ? row : row[column];
          };
        }
        if (prop === "raw") rows.unmetered++;
        const v = (target as any)[prop];
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    unwrap.set(proxy, s);
    return proxy;
  };
  const db = new Proxy(env.DB, {
    get(target, prop, self) {
      // The app opens a D1 session per request (src/platform/d1.ts): keep it on this proxy.
      if (prop === "withSession") return () => self;
      if (prop === "prepare") return (query: string) => wrap(target.prepare(query));
      if (prop === "batch") {
        return async (stmts: D1PreparedStatement[]) => {
          const results = await target.batch(stmts.map((s) => unwrap.get(s) ?? s));
          for (const r of results) add(r);
          return results;
        };
      }
      const v = (target as any)[prop];
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  const reset = () => Object.assign(rows, { read: 0, written: 0, unmetered: 0 });
  return { db, rows, reset };
}
