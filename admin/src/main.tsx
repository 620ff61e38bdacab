// The admin's shell: sign-in (a page, or a dialog over the page when a session ends mid-work),
// the navigation between its pages, sign-out here or everywhere (docs/admin.md).
import { type ComponentChildren, render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { type ApiError, can, currentSession, loadSession, onSessionChange, signIn, signOut } from "./api";
import { CustomerPage, CustomersPage } from "./customers";
import { KeysPage } from "./keys";
import { OrderPage } from "./orders";
import { OrdersPage } from "./orders-list";
import { ProductPage } from "./products";
import { ProductsPage } from "./products-list";
import { ShippingPage } from "./shipping";
import { TodayPage } from "./today";
import type { Session } from "./types";
import { Message, Title, useRoute } from "./ui";
import { WebhooksPage } from "./webhooks";

const PAGES = [
  { id: "today", label: "Today", scope: "orders:read" },
  { id: "orders", label: "Orders", scope: "orders:read" },
  { id: "customers", label: "Customers", scope: "orders:read" },
  { id: "products", label: "Products", scope: "products:read" },
  { id: "shipping", label: "Shipping", scope: "orders:read" },
  { id: "webhooks", label: "Webhooks", scope: "webhooks" },
  { id: "keys", label: "Keys", scope: "keys" },
] as const;

function SignInForm({ onIn }: { onIn: () => void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      await signIn(key);
      setKey("");
      onIn();
    } catch (err) {
      const e = err as ApiError;
      setError(e.status === 401 ? "That key is not a live secret key of this store." : e.message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit}>
      <label for="key">Secret key</label>
      <input
        id="key"
        name="key"
        type="password"
        autocomplete="off"
        required
        value={key}
        onInput={(e) => setKey(e.currentTarget.value)}
      />
      <p class="hint">
        The environment's API_KEY, or a stored sk_ key. It is exchanged for a session and not kept in this browser.
      </p>
      <button type="submit" disabled={busy}>
        Sign in
      </button>
      <Message error={error} />
    </form>
  );
}

function SignIn({ notice, onIn }: { notice: string; onIn: () => void }) {
  return (
    <main class="signin">
      <Title>Sign in to the store admin</Title>
      {notice && (
        <p class="msg" role="status">
          {notice}
        </p>
      )}
      <SignInForm onIn={onIn} />
    </main>
  );
}

/** Over the page whose session ended: the page stays as it was, edits included, under it. */
function SignInAgain({ onIn }: { onIn: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  return (
    <dialog ref={ref} class="again" aria-labelledby="again-h" onCancel={(e) => e.preventDefault()}>
      <h2 id="again-h">Your session ended</h2>
      <p>Sign in again to go on: what you typed on the page is kept. Then save it again.</p>
      <SignInForm onIn={onIn} />
    </dialog>
  );
}

function SignOut({ onOut }: { onOut: (why: string) => void }) {
  const [error, setError] = useState("");
  const out = async (everywhere: boolean) => {
    try {
      await signOut(everywhere);
    } catch (e) {
      setError((e as Error).message);
    }
    onOut(everywhere ? "Signed out everywhere: every session of this key has ended." : "Signed out.");
  };
  return (
    <details class="signout">
      <summary>Sign out</summary>
      <div>
        <button type="button" onClick={() => out(false)}>
          This browser
        </button>
        <button type="button" onClick={() => out(true)}>
          Everywhere
        </button>
        <Message error={error} />
      </div>
    </details>
  );
}

/** GET /health's configuration warnings (STORE_URL unset, say), as a banner above every page. */
function Warnings() {
  const [warnings, setWarnings] = useState<string[]>([]);
  useEffect(() => {
    fetch("/health")
      .then((r) => r.json())
      .then((b: { warnings?: string[] }) => setWarnings(b.warnings ?? []))
      .catch(() => {});
  }, []);
  return (
    <>
      {warnings.map((w) => (
        <p class="msg warn" role="status">
          {w}
        </p>
      ))}
    </>
  );
}

function Shell({ session, onOut }: { session: Session; onOut: (why: string) => void }) {
  const [page, id, query] = useRoute();
  const pages = PAGES.filter((p) => can(p.scope));
  // No page named, or one this key may not see: the first it may (a keys-only key lands on Keys).
  const shown = pages.some((p) => p.id === page) ? page : pages[0]?.id;
  let body: ComponentChildren;
  if (!pages.length)
    body = (
      <>
        <Title>Nothing to show</Title>
        <p>This key has none of the scopes the admin's pages need (orders:read, products:read, webhooks, keys).</p>
      </>
    );
  else if (shown === "today") body = <TodayPage />;
  else if (shown === "customers") body = id ? <CustomerPage key={id} id={id} /> : <CustomersPage />;
  else if (shown === "orders") body = id ? <OrderPage key={id} id={id} /> : <OrdersPage query={query} />;
  else if (shown === "products") body = id ? <ProductPage key={id} id={id} /> : <ProductsPage />;
  else if (shown === "shipping") body = <ShippingPage />;
  else if (shown === "webhooks") body = <WebhooksPage />;
  else body = <KeysPage />;
  return (
    <>
      <header class="top">
        <a class="brand" href={`#/${pages[0]?.id ?? ""}`}>
          edge-store admin
        </a>
        <nav aria-label="Pages">
          <ul>
            {pages.map((p) => (
              <li>
                <a href={`#/${p.id}`} aria-current={p.id === shown ? "page" : undefined}>
                  {p.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span>{session.key.name}</span>
          <SignOut onOut={onOut} />
        </div>
      </header>
      <main id="main">
        <Warnings />
        {body}
      </main>
    </>
  );
}

function App() {
  const [state, setState] = useState<"loading" | "in" | "out" | "expired">("loading");
  const [notice, setNotice] = useState("");
  useEffect(() => {
    onSessionChange((event, why) => {
      setNotice(why ?? "");
      // A session that ends while a page is open keeps the page (and its edits) under a dialog.
      setState((s) => (event === "in" ? "in" : event === "expired" && s !== "out" ? "expired" : "out"));
    });
    loadSession().then((s) => setState(s ? "in" : "out"));
  }, []);
  const session = currentSession();
  if (state === "loading") return <p class="boot">Loading the admin…</p>;
  if (state === "out" || (state === "in" && !session)) return <SignIn notice={notice} onIn={() => setState("in")} />;
  return (
    <>
      {session && (
        <Shell
          session={session}
          onOut={(why) => {
            setNotice(why);
            setState("out");
          }}
        />
      )}
      {state === "expired" && <SignInAgain onIn={() => setState("in")} />}
    </>
  );
}

const root = document.getElementById("app") as HTMLElement;
root.textContent = ""; // the "Loading" line of index.html
render(<App />, root);
