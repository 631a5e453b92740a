// App: an internal web application reached through the proxy at its own host name under the
// proxy's public address (docs/apps.md). Roles grant it by `app_labels` (deny wins, as for nodes);
// every forwarded request carries a Svc-Jwt-Assertion signed by the App CA.
import { type Static, Type } from "@sinclair/typebox";
import { baseStatusProperties } from "./meta.ts";
import { cel } from "./schema-kit.ts";

/** An HTTP header name (RFC 9110 token). */
export const HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";

/** A header value: no control characters but tab (a CR or LF would smuggle in another header). */
export const HEADER_VALUE_PATTERN = "^[^\\x00-\\x08\\x0A-\\x1F\\x7F]*$";

/**
 * Headers the proxy owns: an App may not set or rewrite them (the assertion would be forgeable,
 * the forwarding headers would lie about the client, the hop-by-hop ones break framing).
 */
export const RESERVED_APP_HEADERS = [
  "svc-jwt-assertion",
  "host",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-forwarded-port",
  "forwarded",
  "connection",
  "upgrade",
  "transfer-encoding",
  "content-length",
  "te",
  "trailer",
  "keep-alive",
  "proxy-authorization",
  "cookie",
] as const;

export const AppHeaderSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128, pattern: HEADER_NAME_PATTERN }),
    /**
     * The value sent to the app; `{{internal.<trait>}}` / `{{external.<trait>}}` take the user's
     * trait (several values joined by ","), `{{user}}` the user name (docs/apps.md).
     */
    value: Type.String({ maxLength: 4096, pattern: HEADER_VALUE_PATTERN }),
  },
  { additionalProperties: false },
);
export type AppHeader = Static<typeof AppHeaderSchema>;

export const AppSpecSchema = Type.Object(
  {
    /** Where the proxy sends requests: http:// or https:// with a host, no query or fragment. */
    uri: Type.String({
      minLength: 8,
      maxLength: 2048,
      // No "@" in the authority: credentials in the URI would be sent to the app by every proxy.
      pattern: "^https?://[^\\s/?#@]+(/[^\\s?#]*)?$",
    }),
    /**
     * The host name users reach it at: one label under the proxy's public host (the wildcard
     * certificate covers one label). Default `<metadata.name>.<proxy public host>`.
     */
    public_addr: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 253,
        pattern: "^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$",
      }),
    ),
    /** Shown in the console and `svc apps ls`. */
    description: Type.Optional(Type.String({ maxLength: 1024 })),
    /** Accept any certificate from an https upstream. Default false; for lab setups only. */
    insecure_skip_verify: Type.Optional(Type.Boolean({ default: false })),
    rewrite: Type.Optional(
      Type.Object(
        {
          /** Set on every forwarded request (replacing what the client sent under that name). */
          headers: Type.Optional(
            Type.Array(AppHeaderSchema, {
              maxItems: 64,
              ...cel(
                {
                  rule: "self.all(h, !(h.name.lowerAscii() in ['svc-jwt-assertion', 'host', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'forwarded', 'connection', 'upgrade', 'transfer-encoding', 'content-length', 'te', 'trailer', 'keep-alive', 'proxy-authorization', 'cookie']))",
                  message: "rewrite.headers may not set a header the proxy owns (docs/apps.md)",
                },
                {
                  rule: "self.all(h, self.exists_one(x, x.name.lowerAscii() == h.name.lowerAscii()))",
                  message: "rewrite.headers names each header once (names are case-insensitive)",
                },
              ),
            }),
          ),
          /**
           * Host names whose absolute redirects (Location) the proxy rewrites to the app's public
           * address, besides the URI's own host, which is always rewritten.
           */
          redirect: Type.Optional(
            Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: 32 }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type AppSpec = Static<typeof AppSpecSchema>;

export const AppStatusSchema = Type.Object({ ...baseStatusProperties }, { additionalProperties: false });
export type AppStatus = Static<typeof AppStatusSchema>;

/** The host users reach `app` at, given the proxy's public host name (no port). */
export function appPublicHost(app: { metadata: { name: string }; spec: AppSpec }, proxyHost: string): string {
  return (app.spec.public_addr ?? `${app.metadata.name}.${proxyHost}`).toLowerCase();
}

/**
 * Whether `host` is one label directly under `proxyHost` (what the wildcard certificate covers
 * and the proxy routes to apps). Both lower-case, no port.
 */
export function isAppHostOf(host: string, proxyHost: string): boolean {
  if (!host.endsWith(`.${proxyHost}`)) return false;
  const label = host.slice(0, -(proxyHost.length + 1));
  return /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(label);
}
