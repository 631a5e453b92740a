// Routes and the shell (navigation, the session's user, roles and expiry, sign out). Each page is
// its own chunk, loaded when first visited, so the first load carries the shell only.

import { useEffect } from "preact/hooks";
import { ErrorBoundary, LocationProvider, lazy, Route, Router, useLocation } from "preact-iso";
import { api, toLogin, unwrap } from "./api/client.ts";
import { ErrorBanner } from "./components/error-banner.tsx";
import { RelativeTime } from "./components/relative-time.tsx";
import { SessionContext, useLoadSession, useSession } from "./session.tsx";

const Login = lazy(() => import("./pages/login.tsx"));
const Reset = lazy(() => import("./pages/reset.tsx"));
const Nodes = lazy(() => import("./pages/nodes.tsx"));
const Apps = lazy(() => import("./pages/apps.tsx"));
const Launch = lazy(() => import("./pages/launch.tsx"));
const Terminal = lazy(() => import("./pages/terminal.tsx"));
const Recordings = lazy(() => import("./pages/recordings.tsx"));
const Recording = lazy(() => import("./pages/recording.tsx"));
const Audit = lazy(() => import("./pages/audit.tsx"));
const Users = lazy(() => import("./pages/users.tsx"));
const Roles = lazy(() => import("./pages/roles.tsx"));
const Tokens = lazy(() => import("./pages/tokens.tsx"));
const Bots = lazy(() => import("./pages/bots.tsx"));
const Account = lazy(() => import("./pages/account.tsx"));

/**
 * The navigation, in this order; every page of the console is reachable from it. `needs` is the
 * capability (GET /v1/webapi/session's `allowed`) without which the entry is hidden: the page
 * would only say "Not allowed". Hiding is for clarity; the server still decides every request.
 */
export const NAV: Array<{ href: string; label: string; needs?: string }> = [
  { href: "/web/nodes", label: "Nodes" },
  { href: "/web/apps", label: "Apps" },
  { href: "/web/recordings", label: "Recordings" },
  { href: "/web/audit", label: "Audit log", needs: "audit:list" },
  { href: "/web/users", label: "Users", needs: "users:list" },
  { href: "/web/roles", label: "Roles", needs: "roles:list" },
  { href: "/web/tokens", label: "Join tokens", needs: "tokens:list" },
  { href: "/web/bots", label: "Bots", needs: "agent_identities:list" },
  { href: "/web/account", label: "Account" },
];

/** The entries the session may use; while it loads, only the ones everybody has. */
export function visibleNav(allowed: readonly string[] | undefined): typeof NAV {
  return NAV.filter((item) => item.needs === undefined || (allowed?.includes(item.needs) ?? false));
}

function Redirect(props: { to: string }) {
  const { route } = useLocation();
  useEffect(() => route(props.to, true), [props.to, route]);
  return null;
}

function NotFound() {
  return (
    <section class="page">
      <h1>Page not found</h1>
      <p>
        <a href="/web/nodes">Go to the nodes</a>
      </p>
    </section>
  );
}

async function signOut(): Promise<void> {
  try {
    await unwrap(api.POST("/v1/webapi/logout"));
  } finally {
    location.assign("/web/login");
  }
}

function SessionInfo() {
  const { session } = useSession();
  if (!session) return <span class="session" aria-busy="true" />;
  return (
    <span class="session">
      <span id="user" class="session-user">
        {session.username}
      </span>
      <span id="roles" class="session-roles" title="Your roles">
        {session.roles.join(", ") || "no roles"}
      </span>
      <span class="session-expiry">
        Session ends <RelativeTime value={session.expires_at} />
      </span>
    </span>
  );
}

/** What a signed-in user must know before anything else: no roles, or a key to enrol first. */
function SessionNotices() {
  const { session } = useSession();
  const { path } = useLocation();
  if (!session) return null;
  if (session.scope === "mfa_enrollment" && path !== "/web/account") {
    return (
      <p id="enrol-required" class="notice">
        Your roles require a security key. <a href="/web/account?enrol=required">Add one</a>, then sign in
        again.
      </p>
    );
  }
  if (session.roles.length === 0) {
    return (
      <p id="no-roles" class="notice" role="status">
        You are signed in as {session.username}, but your account has no roles, so there is nothing you may
        see or do here yet. Ask an administrator to give you a role, then sign in again.
      </p>
    );
  }
  return null;
}

function Shell(props: { children: preact.ComponentChildren }) {
  const state = useLoadSession();
  const { path } = useLocation();
  return (
    <SessionContext.Provider value={state}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="shell-header">
        <a class="brand" href="/web/nodes">
          svc
        </a>
        <nav aria-label="Console" class="shell-nav">
          <ul>
            {visibleNav(state.session?.allowed).map((item) => (
              <li key={item.href}>
                <a
                  href={item.href}
                  aria-current={path === item.href || path.startsWith(`${item.href}/`) ? "page" : undefined}
                >
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <SessionInfo />
        <button id="logout" type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {state.error ? <ErrorBanner error={state.error} /> : null}
        <SessionNotices />
        {props.children}
      </main>
    </SessionContext.Provider>
  );
}

function Console() {
  return (
    <Shell>
      <ErrorBoundary>
        <Router>
          <Route path="/" component={() => <Redirect to="/web/nodes" />} />
          <Route path="/nodes" component={Nodes} />
          <Route path="/apps" component={Apps} />
          <Route path="/launch/:host" component={Launch} />
          <Route path="/terminal" component={Terminal} />
          <Route path="/recordings" component={Recordings} />
          <Route path="/recordings/:id" component={Recording} />
          <Route path="/audit" component={Audit} />
          <Route path="/users" component={Users} />
          <Route path="/roles" component={Roles} />
          <Route path="/tokens" component={Tokens} />
          <Route path="/bots" component={Bots} />
          <Route path="/account" component={Account} />
          <Route default component={NotFound} />
        </Router>
      </ErrorBoundary>
    </Shell>
  );
}

export function App() {
  return (
    <LocationProvider scope="/web/">
      <ErrorBoundary>
        <Router>
          <Route path="/web/login" component={() => <Login />} />
          <Route path="/web/reset" component={() => <Reset />} />
          <Route path="/web/*" component={Console} />
        </Router>
      </ErrorBoundary>
    </LocationProvider>
  );
}

export { toLogin };
