// The admin's shell: sign-in, the navigation between its pages, sign-out (src/docs/admin.md).
import { type ComponentChildren, render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { type ApiError, can, currentSession, signIn, signOut, whenSignedOut } from "./api";
import { KeysPage } from "./keys";
import { OrderPage, OrdersPage } from "./orders";
import { ProductPage, ProductsPage } from "./products";
import type { Session } from "./types";
import { Message, Title, useRoute } from "./ui";
import { WebhooksPage } from "./webhooks";

const PAGES = [
  { id: "orders", label: "Orders", scope: "orders:read" },
  { id: "products", label: "Products", scope: "products:read" },
  { id: "webhooks", label: "Webhooks", scope: "webhooks" },
  { id: "keys", label: "Keys", scope: "keys" },
];

function SignIn({ notice, onIn }: { notice: string; onIn: () => void }) {
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
    <main class="signin">
      <Title>Sign in to the store admin</Title>
      {notice && (
        <p class="msg" role="status">
          {notice}
        </p>
      )}
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
    </main>
  );
}

function Shell({ session, onOut }: { session: Session; onOut: (why: string) => void }) {
  const [page, id] = useRoute();
  const pages = PAGES.filter((p) => can(p.scope));
  const [error, setError] = useState("");
  const out = async () => {
    try {
      await signOut();
    } catch (e) {
      setError((e as Error).message);
    }
    onOut("Signed out.");
  };
  let body: ComponentChildren;
  if (!pages.some((p) => p.id === page))
    body = (
      <>
        <Title>Not a page</Title>
        <p>Pick one in the menu.</p>
      </>
    );
  else if (page === "orders") body = id ? <OrderPage key={id} id={id} /> : <OrdersPage />;
  else if (page === "products") body = id ? <ProductPage key={id} id={id} /> : <ProductsPage />;
  else if (page === "webhooks") body = <WebhooksPage />;
  else body = <KeysPage />;
  return (
    <>
      <header class="top">
        <a class="brand" href="#/orders">
          edge-store admin
        </a>
        <nav aria-label="Pages">
          <ul>
            {pages.map((p) => (
              <li>
                <a href={`#/${p.id}`} aria-current={p.id === page ? "page" : undefined}>
                  {p.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span>{session.key.name}</span>
          <button type="button" class="link" onClick={out}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main">
        {body}
        <Message error={error} />
      </main>
    </>
  );
}

function App() {
  const [session, setSession] = useState(currentSession);
  const [notice, setNotice] = useState("");
  useEffect(
    () =>
      whenSignedOut((why) => {
        setNotice(why);
        setSession(null);
      }),
    [],
  );
  if (!session) return <SignIn notice={notice} onIn={() => setSession(currentSession())} />;
  return (
    <Shell
      session={session}
      onOut={(why: string) => {
        setNotice(why);
        setSession(null);
      }}
    />
  );
}

const root = document.getElementById("app") as HTMLElement;
root.textContent = ""; // the "Loading" line of index.html
render(<App />, root);
