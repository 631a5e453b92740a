// svcctl's connection to auth: gRPC over TLS 1.3 trusting the cluster's host CA, with the admin's
// own session from `svc login` as `authorization: Bearer`. Auth decides every access from the
// caller's roles (core/rbac); svcctl has no privileges of its own. Auth is reached directly
// (--auth) or through the proxy's public port (--proxy, or the profile's proxy), whose router
// passes the gRPC connection through to auth untouched (server/auth/via-proxy.ts).
import { readFile } from "node:fs/promises";
import { NotAuthenticatedError } from "../core/errors.ts";
import {
  type AuthServiceClient,
  callUnary,
  createAuthClient,
  type RequestOf,
  type ResponseOf,
  type UnaryRpc,
  userMetadata,
} from "../server/auth/client.ts";
import { type AuthRoute, authRouteViaProxy } from "../server/auth/via-proxy.ts";
import { CliError, EXIT } from "./exit-codes.ts";
import { loadProfile, type Profile } from "./profile.ts";

export const DEFAULT_AUTH_ADDRESS = "127.0.0.1:3025";

export interface AdminConnectionOptions {
  auth?: string;
  proxy?: string;
  ca?: string;
}

export interface AdminConnection {
  profile: Profile & { session_id: string };
  /** where the gRPC channel connects (auth, or the proxy) */
  authAddress: string;
  /** the proxy's public address when the connection goes through it */
  proxyAddress?: string;
  caPem: string;
  call<K extends UnaryRpc>(rpc: K, request: RequestOf<K>): Promise<ResponseOf<K>>;
  close(): void;
}

/**
 * --auth, then --proxy, then $SVC_AUTH_ADDR, then the profile's auth (svc login --auth), then the
 * profile's proxy, then 127.0.0.1:3025. A proxy is asked (ping) for the name that routes to auth.
 */
export async function adminRouteOf(
  opts: AdminConnectionOptions,
  profile: Profile | undefined,
  env = process.env,
): Promise<AuthRoute> {
  if (opts.auth && opts.proxy)
    throw new CliError("--auth and --proxy name two ways to reach auth: pass only one", EXIT.usage);
  if (opts.auth) return { address: opts.auth };
  if (opts.proxy) return authRouteViaProxy(opts.proxy);
  const direct = (env.SVC_AUTH_ADDR || undefined) ?? profile?.auth;
  if (direct) return { address: direct };
  if (profile?.proxy) return authRouteViaProxy(profile.proxy);
  return { address: DEFAULT_AUTH_ADDRESS };
}

export async function adminConnection(opts: AdminConnectionOptions): Promise<AdminConnection> {
  const profile = await loadProfile();
  if (!profile?.session_id)
    throw new NotAuthenticatedError("not logged in (run: svc login as an admin first)");
  if (profile.expires_at && Date.parse(profile.expires_at) <= Date.now()) {
    throw new NotAuthenticatedError(`the session of ${profile.user ?? "?"} expired (run: svc login)`);
  }
  const caPem = opts.ca
    ? await readFile(opts.ca, "utf8").catch((err: Error) => {
        throw new CliError(`cannot read --ca ${opts.ca}: ${err.message}`, EXIT.usage);
      })
    : profile.ca_pem;
  if (!caPem) {
    throw new CliError(
      "no host CA to verify auth with: pass --ca <host-ca.pem> (the profile has none)",
      EXIT.usage,
    );
  }
  const route = await adminRouteOf(opts, profile);
  const client: AuthServiceClient = createAuthClient({
    address: route.address,
    caPems: [caPem],
    ...(route.serverName ? { serverName: route.serverName } : {}),
  });
  const md = userMetadata(profile.session_id);
  return {
    profile: profile as Profile & { session_id: string },
    authAddress: route.address,
    ...(route.proxy ? { proxyAddress: route.proxy } : {}),
    caPem,
    call: (rpc, request) => callUnary(client, rpc, request, md),
    close: () => client.close(),
  };
}

/** Runs `fn` with a connection and always closes it. */
export async function withAdmin<T>(
  opts: AdminConnectionOptions,
  fn: (c: AdminConnection) => Promise<T>,
): Promise<T> {
  const c = await adminConnection(opts);
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}
