// What every page of the admin uses: messages, loading, formats.
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

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
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data: T | undefined; error: string; loading: boolean }>({
    data: undefined,
    error: "",
    loading: true,
  });
  const reload = useCallback(() => {
    setState((s) => ({ ...s, loading: true, error: "" }));
    return load().then(
      (data) => setState({ data, error: "", loading: false }),
      (e: Error) => setState({ data: undefined, error: e.message, loading: false }),
    );
  }, deps);
  useEffect(() => {
    reload();
  }, [reload]);
  return { ...state, reload };
}

/**
 * Runs a write, keeping its error or success text for the page; `busy` while it runs.
 */
export function useAction() {
  const [state, setState] = useState({ busy: false, error: "", ok: "" });
  const run = async <T,>(fn: () => Promise<T>, ok: string): Promise<T | undefined> => {
    setState({ busy: true, error: "", ok: "" });
    try {
      const out = await fn();
      setState({ busy: false, error: "", ok });
      return out;
    } catch (e) {
      setState({ busy: false, error: (e as Error).message, ok: "" });
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

/** An ISO time or "YYYY-MM-DD hh:mm:ss" as a short local date and time; "" for none. */
export const when = (v: string | number | null | undefined) => {
  if (!v) return "";
  const d = new Date(typeof v === "string" && !v.includes("T") ? `${v.replace(" ", "T")}Z` : v);
  return Number.isNaN(d.getTime())
    ? String(v)
    : d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
};

export const STATUSES = ["unpaid", "paid", "done", "cancelled"];
const STATUS_NAMES: Record<string, string> = { "-1": "unpaid", 1: "paid", 2: "done", 3: "cancelled" };
/** An order's status, from a code ("-1", "1", ...) or a name. */
export const statusName = (s: string) => STATUS_NAMES[s] ?? s;

export const Status = ({ status }: { status: string }) => (
  <span class={`badge status-${statusName(status)}`}>{statusName(status)}</span>
);

/** Where the admin is: "#/orders/1001" -> ["orders", "1001"]. */
export function useRoute() {
  const read = () => (location.hash.replace(/^#\/?/, "") || "orders").split("/");
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = () => setRoute(read());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
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
