// The web API calls of the apps pages: the apps the user may reach, and the one-time code that
// starts an app session (docs/apps.md, "The flow").
import { api, unwrap } from "../api/client.ts";
import type { paths } from "../api/schema.d.ts";

type AppList = paths["/v1/webapi/apps"]["get"]["responses"][200]["content"]["application/json"];
export type AppItem = AppList["apps"][number];
export type AppSessionStart =
  paths["/v1/webapi/apps/sessions"]["post"]["responses"][201]["content"]["application/json"];

export async function listApps(): Promise<AppItem[]> {
  return (await unwrap(api.GET("/v1/webapi/apps"))).apps;
}

/** A one-time code for the app at `publicAddr` (a bare, lower-case host name). */
export async function startAppSession(publicAddr: string): Promise<AppSessionStart> {
  return unwrap(api.POST("/v1/webapi/apps/sessions", { body: { public_addr: publicAddr } }));
}
