// D1 round trips per request, counted in the worker (for the store's requests in index.ts and
// the queue consumer case in consume.ts): the store's binding is wrapped once per isolate (so
// per-isolate caches keyed on it stay warm), and the counts of the request go back in
// the x-bench-d1 header as "calls/statements", and the SQL time D1 reports for them (its results'
// meta.duration; first() and raw() report none) in x-bench-d1-ms. Requests are profiled one at a
// time, so one counter suffices; under autocannon's load the headers are simply not read.
export const counts = { calls: 0, statements: 0, sqlMs: 0 };

/** Resets the counts before a request. */
export function resetCounts() {
  Object.assign(counts, { calls: 0, statements: 0, sqlMs: 0 });
}

/** The counts as the bench's response headers carry them. */
export const countHeaders = () => ({
  "x-bench-d1": `${counts.calls}/${counts.statements}`,
  "x-bench-d1-ms": String(counts.sqlMs),
});

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
