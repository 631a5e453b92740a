// Sign-in: a password (POST /v1/webapi/login), a button per SSO connector (each goes to the
// proxy's /v1/webapi/sso/<name>/login), and the WebAuthn step that follows either when the user's
// roles require it (@simplewebauthn/browser). The session arrives as HttpOnly cookies; the page
// then loads `next` when it is one of our own /web/ pages (never an outside address).
// After SSO, MFA arrives in the fragment (#sso_mfa=<token>&sso_request=<id>, never sent to a
// server), and a refused SSO login as #sso_error=<message>.
import {
  type AuthenticationResponseJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  startAuthentication,
} from "@simplewebauthn/browser";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api, describeError, safeNext, unwrap } from "../api/client.ts";

interface Connector {
  name: string;
  display_name: string;
  type: string;
}

interface MfaChallenge {
  challengeId: string;
  options: PublicKeyCredentialRequestOptionsJSON;
}

/** What the address says: where to go afterwards, why we are here, and an SSO hand-over. */
function readAddress() {
  const query = new URLSearchParams(location.search);
  const hash = new URLSearchParams(location.hash.slice(1));
  const ssoMfa = hash.get("sso_mfa");
  const sso = {
    mfaToken: ssoMfa,
    request: hash.get("sso_request"),
    error: hash.get("sso_error"),
    password: location.hash === "#password",
  };
  // Read once: a reload must not replay an MFA token, and it should not linger in the address bar.
  if (location.hash && location.hash !== "#password") {
    history.replaceState(null, "", location.pathname + location.search);
  }
  return { next: safeNext(query.get("next")), reason: query.get("reason"), sso };
}

/** Only the CLI's loopback listener (the proxy checked it too). */
const CLI_REDIRECT = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost):\d{1,5}\//;

export default function LoginPage() {
  const [address] = useState(readAddress);
  const [connectors, setConnectors] = useState<Connector[]>([]);
  const [localLogin, setLocalLogin] = useState(true);
  const [showPassword, setShowPassword] = useState(address.sso.password);
  const [mfa, setMfa] = useState<"off" | "waiting" | "retry">(address.sso.mfaToken ? "waiting" : "off");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>(
    address.sso.error ? `Single sign-on failed: ${address.sso.error}` : "",
  );
  const username = useRef<HTMLInputElement>(null);
  const challenge = useRef<MfaChallenge | undefined>(undefined);

  useEffect(() => {
    document.title = "Sign in · svc";
    if (address.sso.mfaToken) {
      void webauthnStep();
      return;
    }
    Promise.all([unwrap(api.GET("/v1/webapi/ping")), unwrap(api.GET("/v1/webapi/connectors/public"))])
      .then(([ping, list]) => {
        setLocalLogin(ping.auth?.local_login !== false);
        setConnectors(list.items ?? []);
      })
      .catch((err: unknown) => setError(describeError(err)));
  }, []);

  const done = (redirectUrl?: string): void => {
    if (typeof redirectUrl === "string") {
      if (!CLI_REDIRECT.test(redirectUrl)) throw new Error("unexpected redirect");
      location.assign(redirectUrl);
      return;
    }
    // A new document: the shell loads the fresh session.
    location.assign(address.next);
  };

  /** The WebAuthn step: a challenge (given, or fresh from the MFA token), the key's answer, the session. */
  async function webauthnStep(): Promise<void> {
    setError("");
    setMfa("waiting");
    try {
      let c = challenge.current;
      if (!c) {
        const token = address.sso.mfaToken;
        if (!token) throw new Error("the sign-in step expired; start again");
        const fresh = await unwrap(
          api.POST("/v1/webapi/mfa/webauthn/login/begin", { body: { mfa_token: token } }),
        );
        c = {
          challengeId: fresh.challenge_id,
          options: fresh.webauthn as unknown as PublicKeyCredentialRequestOptionsJSON,
        };
      }
      // A challenge is single-use: a retry asks for a new one.
      challenge.current = undefined;
      const credential: AuthenticationResponseJSON = await startAuthentication({ optionsJSON: c.options });
      const finished = await unwrap(
        api.POST("/v1/webapi/mfa/webauthn/login/finish", {
          body: {
            challenge_id: c.challengeId,
            credential: credential as never,
            ...(address.sso.request ? { sso_request: address.sso.request } : {}),
          },
        }),
      );
      done((finished as { redirect_url?: string }).redirect_url);
    } catch (err) {
      setMfa("retry");
      setError(describeMfaError(err));
    }
  }

  async function submit(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    setError("");
    setBusy(true);
    try {
      const session = await unwrap(
        api.POST("/v1/webapi/login", {
          body: { username: String(data.get("username")), password: String(data.get("password")) },
        }),
      );
      // Roles that require MFA and no device yet: the session may only enrol one.
      if (session.scope === "mfa_enrollment") location.assign("/web/account?enrol=required");
      else done();
    } catch (err) {
      const m = mfaChallengeOf(err);
      if (m) {
        challenge.current = m.challenge;
        address.sso.mfaToken = m.token;
        await webauthnStep();
      } else {
        setError(describeError(err));
      }
    } finally {
      setBusy(false);
    }
  }

  // The link sets #password (which also works on a reload): the form shows, focused.
  useEffect(() => {
    const onHash = (): void => {
      if (location.hash !== "#password") return;
      setShowPassword(true);
      setTimeout(() => username.current?.focus(), 0);
    };
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);

  const formHidden = !localLogin && !showPassword;
  return (
    <main class="form" id="main">
      <h1>Sign in</h1>
      {address.reason === "expired" ? (
        <p id="expired" class="notice">
          Your session ended. Sign in again to go back where you were.
        </p>
      ) : null}
      <form id="login" hidden={formHidden || mfa !== "off"} onSubmit={submit}>
        <label>
          Username
          <input ref={username} id="username" name="username" autocomplete="username" required />
        </label>
        <label>
          Password
          <input id="password" name="password" type="password" autocomplete="current-password" required />
        </label>
        <button id="submit" type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
      <div id="connectors" class="connectors" hidden={connectors.length === 0 || mfa !== "off"}>
        {connectors.map((c) => (
          <a
            key={c.name}
            class="connector button secondary"
            data-connector={c.name}
            href={`/v1/webapi/sso/${encodeURIComponent(c.name)}/login?redirect_url=${encodeURIComponent(address.next)}`}
          >
            Sign in with {c.display_name || c.name}
          </a>
        ))}
      </div>
      <p id="password-link" hidden={!formHidden || mfa !== "off"}>
        <a href="#password">Sign in with a password</a> (the first administrator, when single sign-on fails)
      </p>
      <div id="mfa" hidden={mfa === "off"}>
        <p>{mfa === "waiting" ? "Confirm with your security key…" : "Confirm with your security key."}</p>
        <button id="mfa-retry" type="button" disabled={mfa === "waiting"} onClick={() => void webauthnStep()}>
          Use security key
        </button>
      </div>
      <div id="error" class="error" role="alert">
        {error}
      </div>
    </main>
  );
}

/** The 401 `mfa_required` of a password login carries the first challenge and the MFA token. */
function mfaChallengeOf(err: unknown): { token: string; challenge: MfaChallenge } | undefined {
  if (!(err instanceof ApiError) || err.code !== "mfa_required") return undefined;
  const m = (err.body as { mfa?: { mfa_token?: string; challenge_id?: string; webauthn?: unknown } })?.mfa;
  if (!m?.mfa_token || !m.challenge_id || !m.webauthn) return undefined;
  return {
    token: m.mfa_token,
    challenge: {
      challengeId: m.challenge_id,
      options: m.webauthn as PublicKeyCredentialRequestOptionsJSON,
    },
  };
}

function describeMfaError(err: unknown): string {
  // The browser's own refusals (cancelled, timed out, no matching key) are DOMExceptions.
  if (err instanceof Error && (err.name === "NotAllowedError" || err.name === "AbortError")) {
    return "The security key did not answer (cancelled or timed out). Try again.";
  }
  return describeError(err);
}
