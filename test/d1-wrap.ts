import { env } from "cloudflare:workers";

export type D1Counts = {
  calls: number;
  statements: number;
  statementsPerCall: number[];
  /** Each call's statements, as their SQL text. */
  queries: string[][];
  maxParamBytes: number;
  /** Rows D1 reports written and read (each result's meta), summed over the calls: what D1 bills. */
  rowsWritten: number;
  rowsRead: number;
  /** Each statement's rows written, by call. */
  writtenPerStatement: number[][];
};

/**
 * A D1 binding that counts round trips (a batch or a single statement's first/all/run/raw is one
 * call) and statements, and can fail its Nth call to inject faults, or run `before` each call
 * (with its number) to change the data between two of a request's calls. Wraps the real local D1.
 */
export function wrapD1(options: { failCall?: number; before?: (call: number) => Promise<void> } = {}) {
  const real = env.DB;
  const counts: D1Counts = {
    calls: 0,
    statements: 0,
    statementsPerCall: [],
    queries: [],
    maxParamBytes: 0,
    rowsWritten: 0,
    rowsRead: 0,
    writtenPerStatement: [],
  };
  const billed = (results: unknown) => {
    const written: number[] = [];
    for (const r of Array.isArray(results) ? results : [results]) {
      const meta = (r as { meta?: { rows_written?: number; rows_read?: number } } | null)?.meta;
      counts.rowsWritten += meta?.rows_written ?? 0;
      counts.rowsRead += meta?.rows_read ?? 0;
      written.push(meta?.rows_written ?? 0);
    }
    counts.writtenPerStatement.push(written);
  };
  const sqlOf = new WeakMap<object, string>();
  const unwrap = new WeakMap<object, D1PreparedStatement>();

  const call = (queries: string[]) => {
    counts.calls++;
    counts.statements += queries.length;
    counts.statementsPerCall.push(queries.length);
    counts.queries.push(queries);
    if (counts.calls === options.failCall) throw new Error("D1_ERROR: injected fault: Network connection lost.");
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
            const out = await (target as any)[prop](...args);
            if (prop === "all" || prop === "run") billed(out);
            return out;
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
      // The app opens a D1 session per request (src/platform/session.ts): keep it on this proxy.
      if (prop === "withSession") return () => self;
      if (prop === "prepare") return (query: string) => wrapStmt(target.prepare(query), query);
      if (prop === "batch") {
        return async (stmts: D1PreparedStatement[]) => {
          call(stmts.map((s) => sqlOf.get(s) ?? ""));
          await options.before?.(counts.calls);
          const out = await target.batch(stmts.map((s) => unwrap.get(s) ?? s));
          billed(out);
          return out;
        };
      }
      const v = (target as any)[prop];
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return {
    db,
    counts,
    reset: () =>
      Object.assign(counts, {
        calls: 0,
        statements: 0,
        statementsPerCall: [],
        queries: [],
        maxParamBytes: 0,
        rowsWritten: 0,
        rowsRead: 0,
        writtenPerStatement: [],
      }),
  };
}
