import { getTableName, is, Table } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import * as schema from "../src/db/schema";

// SQL through the schema (CONTRIBUTING.md, end of "Adding an order field"): statements written as
// text name their tables through src/db/schema/ (sqlNames in src/platform/columns.ts, or
// Drizzle's builder), so that renaming a table or a column changes every statement with it or is
// a type error. This test reads every
// source file and fails, naming the file and line, where SQL text names a table of the schema
// raw. Columns are not checked here: their names are too common as words; sqlNames covers them.

// The source files, as text, read when the test is bundled (the Workers runtime has no file system).
declare global {
  interface ImportMeta {
    /** Vite's glob import (https://vite.dev/guide/features#glob-import), resolved at bundle time. */
    glob<T>(pattern: string, options: { query: "?raw"; import: "default"; eager: true }): Record<string, T>;
  }
}
const sources = import.meta.glob<string>("../src/**/*.ts", { query: "?raw", import: "default", eager: true });

/**
 * Files or lines allowed to name a table raw, each with its reason. A key is a path under src/,
 * optionally with ":" and a text the line contains. An entry that no longer matches anything
 * fails the test too, so the list only shrinks.
 */
const ALLOWED: Record<string, string> = {};

/** Each table's SQL name, to the name src/db/schema/ exports it under. */
const exported = new Map(
  Object.entries(schema)
    .filter(([, v]) => is(v, Table))
    .map(([key, t]) => [getTableName(t as Table), key]),
);
const tables = [...exported.keys()];

// A keyword that a table name follows in SQL, then the name as a whole word (not `alias.name`,
// `name_suffix` or a quoted JSON key).
const RAW = new RegExp(`\\b(?:FROM|JOIN|INTO|UPDATE|TABLE|ON)\\s+(${tables.join("|")})\\b(?![.(])`, "g");

/** The text without comments (a doc comment may well say "INSERT INTO events"). */
const code = (text: string) =>
  text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " ")).replace(/^\s*\/\/.*$/gm, "");

describe("SQL names its tables through the schema", () => {
  it("reads the schema's tables and the sources", () => {
    expect(tables).toContain("products");
    expect(tables).toContain("order_lines");
    expect(Object.keys(sources).length).toBeGreaterThan(50);
  });

  it("catches a raw table name and nothing else", () => {
    const hits = (text: string) => [...text.matchAll(RAW)].map((m) => m[1]);
    expect(hits("SELECT 1 FROM products WHERE id = ?1")).toEqual(["products"]);
    expect(hits("INSERT INTO order_lines (order_id) SELECT 1 FROM t JOIN variants AS v ON v.id = t.id")).toEqual([
      "order_lines",
      "variants",
    ]);
    expect(hits("SELECT 1 FROM t JOIN products_fts ON products.id = x FROM json_each(?1)")).toEqual([]);
    expect(code("/* INSERT INTO events */ x\n  // FROM products\n")).not.toMatch(RAW);
  });

  it("no source file names a table raw in SQL text", () => {
    const used = new Set<string>();
    const found: string[] = [];
    for (const [file, text] of Object.entries(sources)) {
      const path = file.replace(/^\.\.\/src\//, "");
      // A file allowed whole is used only while it still names a table raw.
      if (ALLOWED[path] !== undefined) {
        if (code(text).match(RAW)) used.add(path);
        continue;
      }
      code(text)
        .split("\n")
        .forEach((line, i) => {
          for (const m of line.matchAll(RAW)) {
            const allowed = Object.keys(ALLOWED).find(
              (k) => k.startsWith(`${path}:`) && line.includes(k.slice(path.length + 1)),
            );
            if (allowed) used.add(allowed);
            else
              found.push(
                `src/${path}:${i + 1}: ${m[0]} (name it through sqlNames(${exported.get(m[1])}) or the builder)`,
              );
          }
        });
    }
    expect(found).toEqual([]);
    expect(Object.keys(ALLOWED).filter((k) => !used.has(k))).toEqual([]);
  });
});
