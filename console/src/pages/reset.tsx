// The one-time password page (/web/reset?token=…, the link `svcctl users add|reset` and the first
// start print): sends the token from this page's address with the new password to
// POST /v1/webapi/password/reset (no session needed), then points to sign-in. The token is a
// secret: it leaves the address bar and history at once, and the page is served with
// Referrer-Policy: no-referrer.
import { useEffect, useState } from "preact/hooks";
import { api, describeError, unwrap } from "../api/client.ts";
import { resetToken } from "../reset-token.ts";

const MIN_LENGTH = 12;

export default function ResetPage() {
  const [token] = useState(resetToken);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const [user, setUser] = useState<string | undefined>(undefined);

  useEffect(() => {
    document.title = "Choose a password · svc";
  }, []);

  async function submit(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    const password = String(data.get("password"));
    setError("");
    if (password !== String(data.get("again"))) {
      setError("The two passwords differ.");
      return;
    }
    setBusy(true);
    try {
      const done = await unwrap(api.POST("/v1/webapi/password/reset", { body: { token, password } }));
      setUser(done.username);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="form" id="main">
      <h1>Choose a password</h1>
      {token === "" ? (
        <p class="notice">
          This page needs the link you were given, with its token. Ask an administrator for a new one.
        </p>
      ) : null}
      <form id="reset" hidden={user !== undefined} onSubmit={submit}>
        <p id="password-rules" class="hint">
          At least {MIN_LENGTH} characters. The link works once.
        </p>
        <label>
          New password
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="new-password"
            minLength={MIN_LENGTH}
            aria-describedby="password-rules"
            required
          />
        </label>
        <label>
          Repeat it
          <input
            id="again"
            name="again"
            type="password"
            autocomplete="new-password"
            minLength={MIN_LENGTH}
            required
          />
        </label>
        <button id="submit" type="submit" disabled={busy || token === ""}>
          Set password
        </button>
      </form>
      <div id="error" class="error" role="alert">
        {error}
      </div>
      <div id="done" hidden={user === undefined}>
        Password set for <strong id="user">{user}</strong>. <a href="/web/login">Sign in</a>
      </div>
    </main>
  );
}
