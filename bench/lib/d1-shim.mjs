// A D1Database stand-in for running the app in Node, used ONLY to time the app's own JavaScript
// (bench/lib/cpu.mjs). Each statement is executed by the real local D1 inside the running bench
// worker (POST /__bench/d1), and the time every call spends waiting for that is summed in
// `waitMs`, so that the caller can subtract it from the handler's wall time.

/**
 * @param {string} base
 * @param {string} authorization
 */
export function createD1Shim(base, authorization) {
  const state = { waitMs: 0, calls: 0, statements: 0 };

  /** @param {string} op @param {{ sql: string, params: unknown[] }[]} stmts @param {boolean} [columnNames] */
  async function call(op, stmts, columnNames) {
    const start = performance.now();
    try {
      state.calls++;
      state.statements += stmts.length;
      const res = await fetch(`${base}/__bench/d1`, {
        method: "POST",
        headers: { authorization, "content-type": "application/json" },
        body: JSON.stringify({ op, stmts, columnNames }),
      });
      const out = /** @type {{ ok: boolean, value?: any, message?: string, cause?: string }} */ (await res.json());
      if (!out.ok) throw new Error(out.message, { cause: new Error(out.cause) });
      return out.value;
    } finally {
      state.waitMs += performance.now() - start;
    }
  }

  class Stmt {
    /** @param {string} sql @param {unknown[]} params */
    constructor(sql, params = []) {
      this.sql = sql;
      this.params = params;
    }
    /** @param {unknown[]} params */
    bind(...params) {
      return new Stmt(this.sql, params);
    }
    all() {
      return call("all", [this]);
    }
    run() {
      return call("run", [this]);
    }
    /** @param {{ columnNames?: boolean }} [opts] */
    raw(opts) {
      return call("raw", [this], opts?.columnNames === true);
    }
    /** @param {string} [column] */
    async first(column) {
      const row = await call("first", [this]);
      return column === undefined || row == null ? row : row[column];
    }
  }

  const db = {
    /** @param {string} sql */
    prepare: (sql) => new Stmt(sql),
    /** @param {Stmt[]} stmts */
    batch: (stmts) => call("batch", stmts),
    /** @param {string} sql */
    exec: (sql) => call("run", [new Stmt(sql)]),
    // The app opens one D1 session per request (src/platform/d1.ts): the shim is its own.
    withSession: () => ({ prepare: db.prepare, batch: db.batch, getBookmark: () => null }),
  };
  return { db, state };
}
