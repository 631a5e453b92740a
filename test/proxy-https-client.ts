// A small HTTPS client for the proxy tests: node:https with the test CA, raw headers kept (so the
// Set-Cookie flags are read as sent), JSON in and out, and a cookie jar helper.
import { request } from "node:https";

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** every Set-Cookie line as sent */
  setCookies: string[];
  text: string;
  /** parsed JSON body, or undefined when the body is not JSON */
  json: unknown;
}

export interface HttpRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  /** serialized with JSON.stringify unless `raw` is given */
  body?: unknown;
  raw?: string | Buffer;
}

export class HttpsClient {
  readonly baseUrl: string;
  readonly #ca: string;
  readonly #servername: string;

  constructor(baseUrl: string, caPem: string, servername: string) {
    this.baseUrl = baseUrl;
    this.#ca = caPem;
    this.#servername = servername;
  }

  send(req: HttpRequest): Promise<HttpResponse> {
    const url = new URL(req.path, this.baseUrl);
    const headers: Record<string, string> = { ...req.headers };
    let payload: Buffer | undefined;
    if (req.raw !== undefined) payload = Buffer.from(req.raw);
    else if (req.body !== undefined) {
      payload = Buffer.from(JSON.stringify(req.body));
      headers["content-type"] ??= "application/json";
    }
    if (payload !== undefined) headers["content-length"] = String(payload.length);
    return new Promise((resolve, reject) => {
      const r = request(
        url,
        {
          method: req.method ?? "GET",
          headers,
          ca: this.#ca,
          servername: this.#servername,
          agent: false,
          timeout: 30_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let json: unknown;
            try {
              json = text === "" ? undefined : JSON.parse(text);
            } catch {
              json = undefined;
            }
            const sc = res.headers["set-cookie"];
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              setCookies: sc === undefined ? [] : sc,
              text,
              json,
            });
          });
          res.on("error", reject);
        },
      );
      r.on("timeout", () => r.destroy(new Error(`request ${req.method ?? "GET"} ${req.path} timed out`)));
      r.on("error", reject);
      if (payload !== undefined) r.write(payload);
      r.end();
    });
  }
}

/** name=value of each Set-Cookie line, for sending them back. */
export function cookieHeader(setCookies: string[]): string {
  return setCookies.map((line) => line.split(";")[0]).join("; ");
}

/** The attributes of the Set-Cookie line for `name` (lower-cased keys; flags map to ""). */
export function cookieAttributes(setCookies: string[], name: string): Map<string, string> | undefined {
  const line = setCookies.find((l) => l.startsWith(`${name}=`));
  if (line === undefined) return undefined;
  const parts = line.split(";").map((p) => p.trim());
  const attrs = new Map<string, string>();
  attrs.set("value", parts[0]?.slice(name.length + 1) ?? "");
  for (const p of parts.slice(1)) {
    const i = p.indexOf("=");
    attrs.set((i < 0 ? p : p.slice(0, i)).toLowerCase(), i < 0 ? "" : p.slice(i + 1));
  }
  return attrs;
}
