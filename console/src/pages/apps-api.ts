// The web API calls of the apps pages: the apps the user may reach, and the one-time code that
// starts an app session (docs/apps.md, "The flow").
import { api, unwrap } from "../api/client.ts";

// TEMPORARY until the routes land in schema.d.ts (npm run gen:api): the contract's shapes.
export interface AppItem {
  name: string;
  description?: string;
  public_addr: string;
  public_url: string;
  labels: Record<string, string>;
  uri?: string;
}
export interface AppSessionStart {
  code: string;
  login_url: string;
  app: AppItem;
  expires: string;
}
type Call<T> = Promise<{ data?: T; error?: unknown; response: Response }>;
const raw = api as unknown as {
  GET(path: "/v1/webapi/apps"): Call<{ apps: AppItem[] }>;
  POST(path: "/v1/webapi/apps/sessions", init: { body: { public_addr: string } }): Call<AppSessionStart>;
};

export async function listApps(): Promise<AppItem[]> {
  return (await unwrap(raw.GET("/v1/webapi/apps"))).apps;
}

export async function startAppSession(publicAddr: string): Promise<AppSessionStart> {
  return unwrap(raw.POST("/v1/webapi/apps/sessions", { body: { public_addr: publicAddr } }));
}
