// Empties the local D1 of a running `npm run dev` (its --persist-to directory) back to what the
// migrations left, so that the next docs page starts from nothing on the same server: workerd
// shares SQLite's file locks and write-ahead log with this process, so the Worker's next request
// sees the rows gone (checked by the test: a page's first product is product 1 again).
// Starting a server per page would cost a `wrangler dev` start (18 s on a busy 2-core machine) each.
import { readdirSync } from "node:fs";
import path from "node:path";

// catalog_version only ever grows: a storefront's cached catalog answers are keyed by it
// (docs/keys.md, "Edge cache and ETag"), so a number reused after a reset could serve another
// page's catalog. d1_migrations is the schema's own record.
const KEPT = new Set(["catalog_version", "d1_migrations"]);

/** @param {string} persist the server's --persist-to directory */
function databaseFile(persist) {
  const dir = path.join(persist, "v3", "d1", "miniflare-D1DatabaseObject");
  const files = readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
  if (files.length !== 1) throw new Error(`expected one D1 database in ${dir}, found ${files.join(", ")}`);
  return path.join(dir, files[0]);
}

/**
 * Opens the server's database and returns a function that empties it again, keeping the
 * AUTOINCREMENT counters the migrations set (orders start at 1001).
 * @param {string} persist
 */
export async function freshDatabase(persist) {
  // node:sqlite is Node 22.13+; imported here so that the other tests importing serve.mjs run on 20.
  const { DatabaseSync } = await import("node:sqlite");
  const file = databaseFile(persist);
  const open = () => new DatabaseSync(file, { enableForeignKeyConstraints: false });
  const db = open();
  const counters = db.prepare("SELECT name, seq FROM sqlite_sequence").all();
  db.close();
  return () => {
    const db = open();
    try {
      const tables = db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
        )
        .all()
        .map((r) => String(r.name))
        .filter((t) => !KEPT.has(t));
      const q = (/** @type {string} */ t) => `"${t.replaceAll('"', '""')}"`;
      db.exec("BEGIN IMMEDIATE");
      // Twice: a delete's trigger may write a row into a table emptied before it.
      for (let pass = 0; pass < 2; pass++) for (const t of tables) db.exec(`DELETE FROM ${q(t)}`);
      db.exec("DELETE FROM sqlite_sequence");
      const put = db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)");
      for (const c of counters) put.run(c.name, c.seq);
      db.exec("COMMIT");
      for (const t of tables) {
        const n = Number(db.prepare(`SELECT count(*) AS n FROM ${q(t)}`).get()?.n);
        if (n !== 0) throw new Error(`${t} kept ${n} rows after the reset`);
      }
    } finally {
      db.close();
    }
  };
}
