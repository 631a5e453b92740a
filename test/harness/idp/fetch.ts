// A fetch for tests that trusts one extra CA (the harness's throwaway CA), built on node:https
// because Node's global fetch takes no per-request CA. Redirects are not followed.
import { request } from "node:https";

/** RequestInit, also with a plain Uint8Array body (what openid-client's customFetch passes). */
export type TestFetchInit = Omit<RequestInit, "body"> & { body?: BodyInit | Uint8Array | null };
export type TestFetch = (url: string | URL | Request, init?: TestFetchInit) => Promise<Response>;

export function fetchTrusting(caPem: string): TestFetch {
  return async (input, init) => {
    const req0 = input instanceof Request ? input : undefined;
    const url = new URL(req0 ? req0.url : String(input));
    const headers = new Headers(init?.headers ?? req0?.headers);
    const method = init?.method ?? req0?.method ?? "GET";
    let body: Buffer | undefined;
    const raw = init?.body ?? (req0 ? await req0.arrayBuffer() : undefined);
    if (raw instanceof Uint8Array) body = Buffer.from(raw);
    else if (raw !== undefined && raw !== null) body = Buffer.from(await new Response(raw).arrayBuffer());
    if (body !== undefined && body.byteLength > 0) {
      if (!headers.has("content-type") && raw instanceof URLSearchParams)
        headers.set("content-type", "application/x-www-form-urlencoded;charset=UTF-8");
    }
    if (!headers.has("user-agent")) headers.set("user-agent", "svc-tests");
    return await new Promise<Response>((resolve, reject) => {
      const req = request(
        url,
        { method, ca: caPem, headers: Object.fromEntries(headers.entries()), timeout: 10_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const status = res.statusCode ?? 0;
            const h = new Headers();
            for (const [k, v] of Object.entries(res.headers)) {
              if (Array.isArray(v)) for (const x of v) h.append(k, x);
              else if (v !== undefined) h.set(k, v);
            }
            const nullBody = status === 204 || status === 304 || method === "HEAD";
            resolve(new Response(nullBody ? null : Buffer.concat(chunks), { status, headers: h }));
          });
          res.on("error", reject);
        },
      );
      req.once("timeout", () => req.destroy(new Error("request timed out")));
      req.once("error", reject);
      req.end(body);
    });
  };
}
