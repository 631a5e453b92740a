// Application access on the main host (docs/apps.md): the Apps the caller may open, the start of
// an app session (a one-time code the app host's login path trades for its own cookie) and the
// end of the caller's app sessions. Auth decides access; the proxy forwards the caller's session.
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { NotFoundError } from "../../../core/errors.ts";
import { DNS_LABEL_MAX, DNS_LABEL_PATTERN } from "../../../core/resources/meta.ts";
import type { AppInfo } from "../auth-client.ts";
import { sessionOf } from "../plugins/session.ts";
import { commonErrors, errorResponses, sessionSecurity } from "../schemas.ts";

/** The app host's path that trades the one-time code for the app session cookie. */
export const APP_LOGIN_PATH = "/x-svc/app-login";

// App names are DNS labels (the default host label under the public host).
const AppName = Type.String({ minLength: 1, maxLength: DNS_LABEL_MAX, pattern: DNS_LABEL_PATTERN });
// A host name as a browser's location gives it (lower-case); compared with the App's as is.
const PublicAddr = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: "^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$",
});

const App = Type.Object({
  name: Type.String(),
  description: Type.String(),
  public_addr: Type.String({ description: "host name the app is reached at (no scheme, no port)" }),
  public_url: Type.String({ description: "https://<public_addr>[:port]/" }),
  labels: Type.Record(Type.String(), Type.String()),
  uri: Type.Optional(
    Type.String({ description: "internal URI; only for callers whose roles may list apps (apps/list)" }),
  ),
});

// One of the two, never both: the launch page knows only the host the browser came from, the
// CLI and the console's list know the name.
const StartBody = Type.Union(
  [
    Type.Object({ app_name: AppName }, { additionalProperties: false }),
    Type.Object({ public_addr: PublicAddr }, { additionalProperties: false }),
  ],
  { description: "the App by name, or by the host name it is reached at" },
);

const StartResult = Type.Object({
  code: Type.String({
    description: "one-time code (60 s) for the app host's login path; a credential, never log it",
  }),
  login_url: Type.String({ description: `https://<public_addr>[:port]${APP_LOGIN_PATH}` }),
  app: App,
  expires: Type.String({ format: "date-time", description: "when the code expires (60 s at most)" }),
});

const EndQuery = Type.Object({
  app: Type.Optional(
    Type.Union([AppName, Type.Literal("")], { description: "one App; absent or empty = all" }),
  ),
});
const EndResult = Type.Object({
  ended: Type.Integer({ minimum: 0, description: "how many app sessions ended" }),
});

const appView = (a: AppInfo): Static<typeof App> => ({
  name: a.name,
  description: a.description,
  public_addr: a.publicAddr,
  public_url: a.publicUrl,
  labels: a.labels,
  ...(a.uri ? { uri: a.uri } : {}),
});

export async function appRoutes(app: FastifyInstance): Promise<void> {
  // The port the app hosts are reached on is the main host's (one listener, one certificate).
  const publicPort = new URL(app.proxyConfig.publicUrl).port;
  const loginUrlOf = (a: AppInfo): string => {
    const base =
      a.publicUrl !== "" ? a.publicUrl : `https://${a.publicAddr}${publicPort ? `:${publicPort}` : ""}/`;
    return new URL(APP_LOGIN_PATH, base).href;
  };

  app.get(
    "/v1/webapi/apps",
    {
      schema: {
        summary: "The web applications the caller's roles reach",
        tags: ["apps"],
        ...sessionSecurity,
        response: {
          200: Type.Object({ apps: Type.Array(App) }),
          ...errorResponses(401, 403, ...commonErrors),
        },
      },
      preHandler: app.requireSession,
    },
    async (request) => ({
      apps: (await app.authApi.listApps(sessionOf(request).sessionId)).map(appView),
    }),
  );

  app.post<{ Body: Static<typeof StartBody> }>(
    "/v1/webapi/apps/sessions",
    {
      schema: {
        summary: "Start an app session: a one-time code for the app host's login path",
        tags: ["apps"],
        ...sessionSecurity,
        body: StartBody,
        response: { 201: StartResult, ...errorResponses(401, 403, 404, 429, ...commonErrors) },
      },
      preHandler: app.requireSession,
    },
    async (request, reply) => {
      const body = request.body;
      const target = "app_name" in body ? { appName: body.app_name } : { publicAddr: body.public_addr };
      const asked = "app_name" in body ? body.app_name : body.public_addr;
      let started: Awaited<ReturnType<typeof app.authApi.createAppSession>>;
      try {
        started = await app.authApi.createAppSession(sessionOf(request).sessionId, target);
      } catch (err) {
        // One answer for an App that does not exist and one the caller may not reach, whatever
        // words auth chose: the reply must not tell them apart.
        if (err instanceof NotFoundError) throw new NotFoundError(`app ${JSON.stringify(asked)} not found`);
        throw err;
      }
      return reply.code(201).send({
        code: started.code,
        login_url: loginUrlOf(started.app),
        app: appView(started.app),
        expires: started.expires.toISOString(),
      });
    },
  );

  app.delete<{ Querystring: Static<typeof EndQuery> }>(
    "/v1/webapi/apps/sessions",
    {
      schema: {
        summary: "End the caller's app sessions (of one App, or all)",
        tags: ["apps"],
        ...sessionSecurity,
        querystring: EndQuery,
        response: { 200: EndResult, ...errorResponses(401, 403, ...commonErrors) },
      },
      preHandler: app.requireSession,
    },
    async (request) => {
      const one = request.query.app;
      return {
        ended: await app.authApi.logoutApps(sessionOf(request).sessionId, one === "" ? undefined : one),
      };
    },
  );
}
