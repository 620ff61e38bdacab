// What the order and product lists share: a search box, filters, pages of `size` by offset (the
// API's Link header says whether a next page exists), and the pager.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { api } from "./api";
import { useLoad } from "./ui";

/**
 * One list of `path`: `filters` are extra query parameters (empty ones left out). A new search
 * starts at the first page; so should the caller when it changes a filter (`setOffset(0)`).
 */
export function usePagedList<Row>(
  path: string,
  size: number,
  filters: Record<string, string> = {},
  /** The rows of an answer that wraps them (`{"customers": [...]}`); the answer itself by default. */
  rowsOf: (body: unknown) => Row[] = (body) => body as Row[],
) {
  const [search, setSearch] = useState("");
  const [query, setQuery] = useState("");
  const [offset, setOffset] = useState(0);
  const key = JSON.stringify(filters);
  const page = useLoad(() => {
    const q = new URLSearchParams({ limit: String(size), offset: String(offset) });
    for (const [k, v] of Object.entries({ ...filters, search: query })) if (v) q.set(k, v);
    return api("GET", `${path}?${q}`).then((r) => ({ rows: rowsOf(r.body), more: r.headers.has("link") }));
  }, [path, size, key, query, offset]);
  const find = (e: Event) => {
    e.preventDefault();
    setOffset(0);
    setQuery(search.trim());
  };
  return { ...page, search, setSearch, find, offset, setOffset, size };
}

/** The search form of a list, with its filters as children. */
export type PagedList<Row> = ReturnType<typeof usePagedList<Row>>;

export function SearchForm<Row>({
  list,
  id,
  label,
  children,
}: {
  list: PagedList<Row>;
  id: string;
  label: string;
  children?: ComponentChildren;
}) {
  return (
    <search>
      <form class="filters" onSubmit={list.find}>
        {children}
        <div>
          <label for={id}>{label}</label>
          <input id={id} type="search" value={list.search} onInput={(e) => list.setSearch(e.currentTarget.value)} />
        </div>
        <button type="submit">Search</button>
      </form>
    </search>
  );
}

export function Pager<Row>({ list }: { list: PagedList<Row> }) {
  const { offset, size, data, setOffset } = list;
  if (!data || (offset === 0 && !data.more)) return null;
  const count = data.rows.length;
  return (
    <nav class="pager" aria-label="Pages of the list">
      <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - size))}>
        Previous
      </button>
      <span>{count ? `${offset + 1}–${offset + count}` : ""}</span>
      <button type="button" disabled={!data.more} onClick={() => setOffset(offset + size)}>
        Next
      </button>
    </nav>
  );
}
