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
    const arm = (expires: number): void => {
      const left = expires - Date.now();
      if (left <= 0) {
        toLogin("expired");
        return;
      }
      timer = setTimeout(() => arm(expires), Math.min(left, MAX_TIMER));
    };
    unwrap(api.GET("/v1/webapi/session"))
      .then((session) => {
        sessionSeen.value = true;
        setState({ session, error: undefined });
        arm(Date.parse(session.expires_at));
      })
      .catch((error: unknown) => setState({ session: undefined, error }));
    return () => clearTimeout(timer);
  }, []);
  return state;
}
