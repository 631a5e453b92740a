// Signs in at a test identity provider's own login page over HTTP, keeping its cookies, the way a
// browser would: the OpenID provider's form#login, or the GitHub stand-in's form#authorize. Returns
// the query string the provider sends back to `callback` (code and state, or error).
import { fetchTrusting } from "./harness/idp/fetch.ts";

export async function signInAtProvider(o: {
  authUrl: string;
  login: string;
  password: string;
  /** the providers' CA PEM (may hold several) */
  caPem: string;
  /** the redirect URI: reaching it ends the walk */
  callback: string;
}): Promise<string> {
  const f = fetchTrusting(o.caPem);
  const jar = new Map<string, string>();
  let url = o.authUrl;
  let method = "GET";
  let body: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    if (url.startsWith(o.callback)) return new URL(url).search.slice(1);
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await f(url, { method, headers: cookie ? { cookie } : {}, ...(body ? { body } : {}) });
    for (const c of res.headers.getSetCookie()) {
      const [pair = ""] = c.split(";");
      const i = pair.indexOf("=");
      jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url).toString();
      method = "GET";
      body = undefined;
      continue;
    }
    const html = await res.text();
    const form = /<form id="(login|authorize)" method="post" action="([^"]+)"/.exec(html);
    if (res.status !== 200 || !form?.[2])
      throw new Error(`provider page ${res.status}: ${html.slice(0, 300)}`);
    url = new URL(form[2].replaceAll("&amp;", "&"), url).toString();
    method = "POST";
    body = new URLSearchParams({ login: o.login, password: o.password });
    if (form[1] === "authorize") {
      body.set("decision", "authorize");
      body.set("authorization", /name="authorization" value="([^"]+)"/.exec(html)?.[1] ?? "");
    }
  }
  throw new Error("too many steps at the provider");
}
