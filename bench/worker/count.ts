// D1 round trips per request, counted in the worker (for the store's requests in index.ts and
// the queue consumer case in consume.ts): the store's binding is wrapped once per isolate (so
// per-isolate caches keyed on it stay warm), and the counts of the request go back in
// the x-bench-d1 header as "calls/statements", and the SQL time D1 reports for them (its results'
// meta.duration; first() and raw() report none) in x-bench-d1-ms. Requests are profiled one at a
// time, so one counter suffices; under autocannon's load the headers are simply not read.
// The rows D1 bills (every result's meta.rows_read / rows_written, summed) go in x-bench-d1-rows as
// "read/written"; countRows below says how every call's meta is reached.
export const counts = { calls: 0, statements: 0, sqlMs: 0, rowsRead: 0, rowsWritten: 0 };

/** Resets the counts before a request. */
export function resetCounts() {
  Object.assign(counts, { calls: 0, statements: 0, sqlMs: 0, rowsRead: 0, rowsWritten: 0 });
}

/** The counts as the bench's response headers carry them. */
export const countHeaders = () => ({
  "x-bench-d1": `${counts.calls}/${counts.statements}`,
  "x-bench-d1-ms": String(counts.sqlMs),
  "x-bench-d1-rows": rowsCounted ? `${counts.rowsRead}/${counts.rowsWritten}` : "n/a",
});

type Meta = { rows_read?: number; rows_written?: number };
type Send = (...a: unknown[]) => Promise<{ meta?: Meta } | { meta?: Meta }[]>;
let rowsCounted = false;

/**
 * Rows are summed where every D1 call's answer passes: the session object of the binding, whose
 * `_send` every method of a statement (first() and raw() included, whose meta the binding drops)
 * and every batch and exec goes through (workerd's cloudflare-internal:d1-api). It is patched once,
 * on the prototype of the binding's sessions (the one its own statements use is of that class), so
 * every session counts, and so do statements that skip the wrapper below. Where the binding is built
 * otherwise, the header says n/a rather than a wrong figure.
 */
export function countRows(db: D1Database) {
  if (rowsCounted) return;
  // A statement holds its session in a private field; a session of the binding's shares its prototype.
  let proto: { _send?: Send } | null = Object.getPrototypeOf(db.withSession("first-primary"));
  while (proto && !Object.hasOwn(proto, "_send")) proto = Object.getPrototypeOf(proto);
  const send = proto?._send;
  if (!proto || typeof send !== "function") return;
  proto._send = async function (this: unknown, ...a: unknown[]) {
    const out = await send.apply(this, a);
    for (const r of Array.isArray(out) ? out : [out]) {
      counts.rowsRead += r.meta?.rows_read ?? 0;
      counts.rowsWritten += r.meta?.rows_written ?? 0;
    }
    return out;
  };
  rowsCounted = true;
}

function timed<T extends D1Result | D1Result[]>(p: Promise<T>): Promise<T> {
  return p.then((r) => {
    for (const x of Array.isArray(r) ? r : [r]) counts.sqlMs += x.meta?.duration ?? 0;
    return r;
  });
}

function countingStatement(s: D1PreparedStatement): D1PreparedStatement {
  const w = {
    __inner: s,
    bind: (...p: unknown[]) => countingStatement(s.bind(...p)),
    first: (col?: string) => {
      counts.calls++;
      counts.statements++;
      return col === undefined ? s.first() : s.first(col);
    },
    all: () => {
      counts.calls++;
      counts.statements++;
      return timed(s.all());
    },
    run: () => {
      counts.calls++;
      counts.statements++;
      return timed(s.run());
    },
    raw: (o?: { columnNames?: boolean }) => {
      counts.calls++;
      counts.statements++;
      return s.raw(o as { columnNames: true });
    },
  };
  return w as unknown as D1PreparedStatement;
}

const inner = (s: D1PreparedStatement) => (s as unknown as { __inner?: D1PreparedStatement }).__inner ?? s;

export function countingDb(db: D1Database): D1Database {
  const w = {
    prepare: (sql: string) => countingStatement(db.prepare(sql)),
    batch: (stmts: D1PreparedStatement[]) => {
      counts.calls++;
      counts.statements += stmts.length;
      return timed(db.batch(stmts.map(inner)));
    },
    exec: (sql: string) => {
      counts.calls++;
      counts.statements++;
      return db.exec(sql);
    },
    dump: () => db.dump(),
    withSession: (...a: Parameters<D1Database["withSession"]>) =>
      countingDb(db.withSession(...a) as unknown as D1Database) as unknown as D1DatabaseSession,
  };
  return w as unknown as D1Database;
}

const wrapped = new WeakMap<D1Database, D1Database>();

/** The binding's counting wrapper, one per binding object, so per-isolate caches keyed on it stay warm. */
export function countedDb(db: D1Database): D1Database {
  let w = wrapped.get(db);
  if (!w) {
    w = countingDb(db);
    wrapped.set(db, w);
  }
  return w;
}
