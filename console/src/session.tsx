// The signed-in session as the shell shows it (GET /v1/webapi/session), and the end of it: at
// expires_at the user goes to sign-in with the current page kept (any 401 does the same through
// the API client).
import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import { api, sessionSeen, toLogin, unwrap } from "./api/client.ts";
import type { components, paths } from "./api/schema.d.ts";

export type Session = paths["/v1/webapi/session"]["get"]["responses"][200]["content"]["application/json"];
export type { components };

export interface SessionState {
  session: Session | undefined;
  error: unknown;
}

export const SessionContext = createContext<SessionState>({ session: undefined, error: undefined });

/** The current session (undefined while loading). */
export function useSession(): SessionState {
  return useContext(SessionContext);
}

// Browsers cap timers at 2^31-1 ms (~24.8 days); longer sessions re-arm.
const MAX_TIMER = 2_147_483_647;

export function useLoadSession(): SessionState {
  const [state, setState] = useState<SessionState>({ session: undefined, error: undefined });
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    // The deadline on this page's monotonic clock: the time left is measured against the server's
    // clock (the answer's Date header), so a computer whose clock is off still ends on time.
    const arm = (deadline: number): void => {
      const left = deadline - performance.now();
      if (left <= 0) {
        toLogin("expired");
        return;
      }
      timer = setTimeout(() => arm(deadline), Math.min(left, MAX_TIMER));
    };
    api
      .GET("/v1/webapi/session")
      .then(async (result) => {
        const session = await unwrap(Promise.resolve(result));
        sessionSeen.value = true;
        setState({ session, error: undefined });
        const serverNow = Date.parse(result.response.headers.get("date") ?? "");
        const left = Date.parse(session.expires_at) - (Number.isNaN(serverNow) ? Date.now() : serverNow);
        arm(performance.now() + left);
      })
      .catch((error: unknown) => setState({ session: undefined, error }));
    return () => clearTimeout(timer);
  }, []);
  return state;
}
