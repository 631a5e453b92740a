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

/** Where the proxy's app login lives on every app host (the app never sees /x-svc/ paths). */
export const APP_LOGIN_PATH = "/x-svc/app-login";

/**
 * The address the launch page goes to: the server's login_url with the code, the state and the
 * path added, or undefined when login_url is not an https app-login address on the host the user
 * asked for. The host comes from the server's answer only, never from the launch page's address.
 */
export function appLoginTarget(
  loginUrl: string,
  requestedHost: string,
  params: { code: string; state: string; path: string },
): string | undefined {
  let url: URL;
  try {
    url = new URL(loginUrl);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" || url.pathname !== APP_LOGIN_PATH) return undefined;
  if (url.username || url.password || url.search || url.hash) return undefined;
  if (url.hostname !== requestedHost.toLowerCase().replace(/:\d+$/, "")) return undefined;
  url.searchParams.set("code", params.code);
  url.searchParams.set("state", params.state);
  url.searchParams.set("path", params.path);
  return url.href;
}
