import { env } from "cloudflare:workers";

export type D1Counts = {
  calls: number;
  statements: number;
  statementsPerCall: number[];
  /** Each call's statements, as their SQL text. */
  queries: string[][];
  maxParamBytes: number;
  /** Rows D1 reports (each result's meta.rows_read / rows_written), summed over every call. */
  rowsRead: number;
  rowsWritten: number;
  /** The same per statement, in the order they ran, for finding where the rows go. */
  rows: { sql: string; read: number; written: number }[];
};

const fresh = (): D1Counts => ({
  calls: 0,
  statements: 0,
  statementsPerCall: [],
  queries: [],
  maxParamBytes: 0,
  rowsRead: 0,
  rowsWritten: 0,
  rows: [],
});

/**
 * A D1 binding that counts round trips (a batch or a single statement's first/all/run/raw is one
 * call) and statements, and can fail its Nth call to inject faults, or run `before` each call
 * (with its number) to change the data between two of a request's calls. Wraps the real local D1.
 */
export function wrapD1(options: { failCall?: number; before?: (call: number) => Promise<void> } = {}) {
  const real = env.DB;
  const counts = fresh();
  const sqlOf = new WeakMap<object, string>();
  const unwrap = new WeakMap<object, D1PreparedStatement>();

  const call = (queries: string[]) => {
    counts.calls++;
    counts.statements += queries.length;
    counts.statementsPerCall.push(queries.length);
    counts.queries.push(queries);
    if (counts.calls === options.failCall) throw new Error("D1_ERROR: injected fault: Network connection lost.");
  };

  const tally = (sql: string, r: D1Result | undefined) => {
    const read = r?.meta?.rows_read ?? 0;
    const written = r?.meta?.rows_written ?? 0;
    counts.rowsRead += read;
    counts.rowsWritten += written;
    counts.rows.push({ sql, read, written });
  };

  const wrapStmt = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const proxy = new Proxy(stmt, {
      get(target, prop) {
        if (prop === "bind") {
          return (...args: unknown[]) => {
            for (const a of args) {
              if (typeof a === "string")
                counts.maxParamBytes = Math.max(counts.maxParamBytes, new TextEncoder().encode(a).length);
            }
            return wrapStmt(target.bind(...args), sql);
          };
        }
        if (prop === "first" || prop === "all" || prop === "run" || prop === "raw") {
          return async (...args: unknown[]) => {
            call([sql]);
            await options.before?.(counts.calls);
            // first() carries no meta: it runs as all() here so that its rows are counted too.
            if (prop === "first") {
              const r = await target.all();
              tally(sql, r);
              const row = (r.results[0] as Record<string, unknown> | undefined) ?? null;
              return typeof args[0] === "string" ? (row?.[args[0]] ?? null) : row;
            }
            const r = await (target as any)[prop](...args);
            if (prop !== "raw") tally(sql, r);
            return r;
          };
        }
        const v = (target as any)[prop];
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    unwrap.set(proxy, stmt);
    sqlOf.set(proxy, sql);
    return proxy;
  };

  const db = new Proxy(real, {
    get(target, prop, self) {
      // The app opens a D1 session per request (src/platform/d1.ts): keep it on this proxy.
      if (prop === "withSession") return () => self;
      if (prop === "prepare") return (query: string) => wrapStmt(target.prepare(query), query);
      if (prop === "batch") {
        return async (stmts: D1PreparedStatement[]) => {
          const queries = stmts.map((s) => sqlOf.get(s) ?? "");
          call(queries);
          await options.before?.(counts.calls);
          const results = await target.batch(stmts.map((s) => unwrap.get(s) ?? s));
          results.forEach((r, i) => {
            tally(queries[i], r);
          });
          return results;
        };
      }
      const v = (target as any)[prop];
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return {
    db,
    counts,
    reset: () => Object.assign(counts, fresh()),
  };
}
