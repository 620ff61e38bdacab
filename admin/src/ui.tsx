// What every page of the admin uses: messages, loading, formats.
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { currentSession } from "./api";

/** A refusal or a confirmation, read out by screen readers when it appears. */
export function Message({ error, ok }: { error?: string; ok?: string }) {
  if (error)
    return (
      <p class="msg error" role="alert">
        {error}
      </p>
    );
  if (ok)
    return (
      <p class="msg ok" role="status">
        {ok}
      </p>
    );
  return null;
}

/**
 * Loads with `load()` whenever `deps` change; answers {data, error, loading, reload}.
 * `loading` is true from the very render in which `deps` change, while the last answer is still on
 * screen: a click on a row of the old view must not pass for a click on the new one. An answer for
 * deps that are no longer current is dropped, so a slow older answer never replaces a newer one.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data: T | undefined; error: string; loading: boolean }>({
    data: undefined,
    error: "",
    loading: true,
  });
  const current = useRef<object | undefined>(undefined);
  const reload = useCallback(() => {
    const of = {};
    current.current = of;
    setState((s) => ({ ...s, loading: true, error: "" }));
    return load().then(
      (data) => {
        if (current.current === of) setState({ data, error: "", loading: false });
      },
      (e: Error) => {
        if (current.current === of) setState({ data: undefined, error: e.message, loading: false });
      },
    );
  }, deps);
  const asked = useRef(reload);
  useEffect(() => {
    asked.current = reload;
    reload();
  }, [reload]);
  return { ...state, loading: state.loading || asked.current !== reload, reload };
}

/**
 * Runs a write, keeping its error or success text for the page; `busy` while it runs.
 */
export function useAction() {
  const [state, setState] = useState({ busy: false, error: "", ok: "" });
  /** `label` names the fields of a refusal as the page shows them (placeErrors). */
  const run = async <T,>(
    fn: () => Promise<T>,
    ok: string,
    label?: (path: string) => string | undefined,
  ): Promise<T | undefined> => {
    setState({ busy: true, error: "", ok: "" });
    try {
      const out = await fn();
      setState({ busy: false, error: "", ok });
      return out;
    } catch (e) {
      const errors = (e as { errors?: string[] }).errors ?? [];
      const message = label && errors.length ? placeErrors(errors, label) : (e as Error).message;
      setState({ busy: false, error: message, ok: "" });
      return undefined;
    }
  };
  return { ...state, run, clear: () => setState({ busy: false, error: "", ok: "" }) };
}

/** Money as the API gives it (a number or text with decimals), shown with two decimals. */
export const money = (v: number | string | null | undefined, currency = "") => {
  const n = Number(v);
  const s = Number.isFinite(n) ? n.toFixed(2) : String(v ?? "");
  return currency ? `${s} ${currency}` : s;
};

/** An ISO time or "YYYY-MM-DD hh:mm:ss" as a short date and time in the store's zone; "" for none. */
export const when = (v: string | number | null | undefined) => {
  if (!v) return "";
  const d = new Date(typeof v === "string" && !v.includes("T") ? `${v.replace(" ", "T")}Z` : v);
  return Number.isNaN(d.getTime())
    ? String(v)
    : d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short", timeZone: currentSession()?.timezone });
};

export const STATUSES = ["unpaid", "paid", "done", "cancelled"];
const STATUS_NAMES: Record<string, string> = { "-1": "unpaid", 1: "paid", 2: "done", 3: "cancelled" };
/** An order's status, from a code ("-1", "1", ...) or a name. */
export const statusName = (s: string) => STATUS_NAMES[s] ?? s;

/** An order's state in the merchant's words: shipped orders never paid are on invoice. */
export function orderState(status: string, datePaid: string | null): { name: string; label: string } {
  const name = statusName(status);
  if (name === "done") return datePaid ? { name, label: "shipped" } : { name: "invoice", label: "shipped, unpaid" };
  return { name, label: name };
}

export const Status = ({ status }: { status: string }) => (
  <span class={`badge status-${statusName(status)}`}>{statusName(status)}</span>
);

/** Where the admin is: "#/orders/1001" -> ["orders", "1001", query]; "#/orders?view=unpaid" has a query. */
function readRoute(): [string, string | undefined, URLSearchParams] {
  const [path, query = ""] = location.hash.replace(/^#\/?/, "").split("?");
  const [page = "", id] = path.split("/");
  return [page, id || undefined, new URLSearchParams(query)];
}

// Forms with unsaved changes (docs/admin.md, "No lost work"): leaving the page or the
// admin asks first.
const dirty = new Set<object>();
const LEAVE = "You have unsaved changes on this page. Leave it and lose them?";
let here = location.hash;
addEventListener("beforeunload", (e) => {
  if (dirty.size) e.preventDefault();
});

/**
 * Marks the calling form unsaved while `isDirty`; leaving the page then asks first. A layout
 * effect, run as the render commits: a passive one waits for the next frame, and a move away
 * right after a keystroke on a busy machine left before the form was marked.
 */
export function useDirty(isDirty: boolean) {
  const me = useRef({});
  useLayoutEffect(() => {
    if (isDirty) dirty.add(me.current);
    else dirty.delete(me.current);
    return () => {
      dirty.delete(me.current);
    };
  }, [isDirty]);
}

export function useRoute() {
  const [route, setRoute] = useState(readRoute);
  useEffect(() => {
    const on = () => {
      // Only a move to another page can lose an edit; the same page with another query cannot.
      const samePage = location.hash.split("?")[0] === here.split("?")[0];
      if (dirty.size && !samePage && !confirm(LEAVE)) {
        history.replaceState(null, "", here);
        return;
      }
      if (!samePage) dirty.clear();
      here = location.hash;
      setRoute(readRoute());
    };
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

/**
 * An amount as typed in the store's way: "399,50", "399.50", "1 299,5" -> "399.50"-like text the
 * API reads; undefined when it is not an amount of at most two decimals.
 */
export function parseMoney(typed: string): string | undefined {
  const t = typed.trim().replace(/[\s\u00a0']/g, "");
  const m = /^(\d+)(?:[.,](\d{1,2}))?$/.exec(t);
  return m ? `${m[1]}.${(m[2] ?? "").padEnd(2, "0")}` : undefined;
}

/** An API amount as the merchant types it (decimal comma where the browser's language uses one). */
export const moneyInput = (v: number) => {
  const comma = (1.5).toLocaleString().includes(",");
  const s = v.toFixed(2);
  return comma ? s.replace(".", ",") : s;
};

/**
 * A refusal in the page's words: each "path: problem" whose path `label` knows starts with the
 * label on screen instead ("products[3].qty: insufficient stock" -> "Quantity of Mug: insufficient
 * stock"); others keep the API's words.
 */
export function placeErrors(errors: string[], label: (path: string) => string | undefined): string {
  return errors
    .map((e) => {
      const m = /^([\w.[\]]+): (.*)$/s.exec(e);
      const name = m && label(m[1]);
      return name ? `${name}: ${m[2]}` : e;
    })
    .join(" · ");
}

/** A page's heading, focused when the page opens, so keyboard and screen reader users land on it. */
export function Title({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus({ preventScroll: true });
  }, []);
  return (
    <h1 tabindex={-1} ref={ref}>
      {children}
    </h1>
  );
}

/** Copies a secret shown once to the clipboard, and says so. */
export function CopyButton({ text }: { text: string }) {
  const [said, setSaid] = useState("");
  const copy = () =>
    navigator.clipboard.writeText(text).then(
      () => setSaid("Copied."),
      () => setSaid("Could not copy: select it and copy by hand."),
    );
  return (
    <>
      <button type="button" onClick={copy}>
        Copy
      </button>
      <span role="status" class="muted">
        {said && ` ${said}`}
      </span>
    </>
  );
}

/** A checkbox for each of `options` (scopes, event types); `value` the ones ticked, in ticking order. */
export function CheckList({
  options,
  value,
  onChange,
}: {
  options: readonly string[];
  value: string[];
  onChange: (value: string[]) => void;
}) {
  return (
    <>
      {options.map((o) => (
        <label class="check">
          <input
            type="checkbox"
            checked={value.includes(o)}
            onChange={(e) => onChange(e.currentTarget.checked ? [...value, o] : value.filter((x) => x !== o))}
          />{" "}
          {o}
        </label>
      ))}
    </>
  );
}

/**
 * A destructive action asked twice: "Revoke…" shows the question (if any), the action and Keep.
 * `label` names the first button (an ellipsis is added), `action` the second.
 */
export function ConfirmButton({
  label,
  action,
  question,
  busy,
  onConfirm,
}: {
  label: string;
  action: string;
  question?: string;
  busy: boolean;
  onConfirm: () => void;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        {label}…
      </button>
    );
  return (
    <>
      {question && <span>{question}</span>}
      <button type="button" class="danger" disabled={busy} onClick={onConfirm}>
        {action}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Keep
      </button>
    </>
  );
}

/** A column of a table's head: its name, or its name with `num` (a figure, aligned right) or `hidden` (heard only). */
export type Column = string | [string, "num" | "hidden"];

/** A table's head row; `lead` is a first cell of its own (a select-all box). */
export function Heads({ columns, lead }: { columns: Column[]; lead?: ComponentChildren }) {
  return (
    <thead>
      <tr>
        {lead && <th scope="col">{lead}</th>}
        {columns.map((c) => {
          const [name, kind] = typeof c === "string" ? [c] : c;
          if (kind === "hidden")
            return (
              <th scope="col">
                <span class="sr-only">{name}</span>
              </th>
            );
          return (
            <th scope="col" class={kind}>
              {name}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}
