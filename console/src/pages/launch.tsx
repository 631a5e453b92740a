// /web/launch/<app host>?path=<path>&state=<state>: where the proxy sends a browser that reached
// an app host without an app session (docs/apps.md, "The flow"). Signed in (the shell sends a
// visitor without a session to sign-in and back here), the page asks for a one-time code
// (POST /v1/webapi/apps/sessions) and replaces itself with the server's login_url on the app host,
// carrying the code, the state (which the app host checks against its own cookie) and the path.
// It goes nowhere else: the address comes from the server's answer, never from this page's URL.
import { useEffect, useRef, useState } from "preact/hooks";
import { useRoute } from "preact-iso";
import { ApiError, describeError } from "../api/client.ts";
import { Page } from "../components/page.tsx";
import { useSession } from "../session.tsx";
import { startAppSession } from "./apps-api.ts";
import { appLoginTarget, safeAppPath } from "./launch-target.ts";
import "./apps.css";

/** An app host as the proxy writes it: a DNS name, perhaps with a port. */
const HOST = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?(:\d{1,5})?$/i;

type Problem = { title: string; detail: string };

function problemOf(err: unknown, host: string): Problem {
  if (err instanceof ApiError && err.status === 404) {
    return {
      title: "No such app, or you may not use it",
      detail: `${host} is not an app your roles reach. Ask an administrator for access, or pick one of your apps.`,
    };
  }
  return { title: "The app could not be opened", detail: describeError(err) };
}

export default function LaunchPage() {
  const { params } = useRoute();
  const host = params["host"] ?? "";
  const [query] = useState(() => new URLSearchParams(location.search));
  const state = query.get("state") ?? "";
  const { session, error } = useSession();
  const [problem, setProblem] = useState<Problem | undefined>(() => {
    if (!HOST.test(host)) return { title: "Not an app address", detail: `“${host}” is not a host name.` };
    if (state === "") {
      return {
        title: "This app link is incomplete",
        detail:
          "It has no state, so the app cannot tell that the sign-in started in this browser. " +
          "Open the app's address again, or launch it from your apps.",
      };
    }
    return undefined;
  });
  const started = useRef(false);

  useEffect(() => {
    // Once per page: a code is single-use, a second request would only waste one.
    if (!session || problem || started.current) return;
    started.current = true;
    // The web API takes the bare host name, lower-case (as the proxy compares it).
    startAppSession(host.toLowerCase().replace(/:\d+$/, ""))
      .then((answer) => {
        const target = appLoginTarget(answer.login_url, host, {
          code: answer.code,
          state,
          path: safeAppPath(query.get("path")),
        });
        if (!target) {
          setProblem({
            title: "The app could not be opened",
            detail: "The server answered with an unexpected address for the app; it was not followed.",
          });
          return;
        }
        // replace: the back button must not come here again with a spent code.
        location.replace(target);
      })
      .catch((err: unknown) => setProblem(problemOf(err, host)));
  }, [session, problem, host, state, query]);

  // The shell's banner says why the session did not load (a 401 is already on its way to sign-in).
  const stuck = !session && error !== undefined && !(error instanceof ApiError && error.status === 401);
  if (stuck && !problem) return <Page title="The app could not be opened" />;
  return (
    <Page title={problem ? problem.title : "Opening the app"}>
      {problem ? (
        <div id="launch-error" class="launch-status" role="alert">
          <p>{problem.detail}</p>
          <p>
            <a href="/web/apps">Your apps</a>
          </p>
        </div>
      ) : (
        <p id="launch-status" class="launch-status" role="status" aria-busy="true">
          Opening <span class="mono">{host}</span>…
        </p>
      )}
    </Page>
  );
}
