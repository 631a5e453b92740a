// Where the agent (and agentless registration, and bots) dial auth: `--auth host:port` directly,
// or `--proxy host:port`, the proxy's public port, with auth's TLS name learned from its ping
// (server/auth/via-proxy.ts). An agent remembers the route it joined by in its identity, so a
// restart needs neither flag; a flag given later wins and is remembered instead.
import { BadParameterError, hasCode } from "../../core/errors.ts";
import { type AuthRoute, authRouteViaProxy } from "../auth/via-proxy.ts";

export interface AuthTargetFlags {
  /** --auth */
  authAddress?: string;
  /** --auth-server-name (with --auth only) */
  authServerName?: string;
  /** --proxy */
  proxyAddress?: string;
}

/** The route as an agent identity stores it (an identity of an older version has none). */
export interface StoredAuthRoute {
  authAddress?: string;
  authServerName?: string;
  proxyAddress?: string;
}

export function checkAuthTargetFlags(f: AuthTargetFlags): void {
  if (f.authAddress && f.proxyAddress)
    throw new BadParameterError("--auth and --proxy name two ways to reach auth: pass only one");
  if (f.authServerName && f.proxyAddress)
    throw new BadParameterError(
      "--auth-server-name goes with --auth; with --proxy the name comes from the proxy",
    );
}

/** The route from the flags alone; throws when neither --auth nor --proxy is given. */
export async function authRouteOf(f: AuthTargetFlags): Promise<AuthRoute> {
  checkAuthTargetFlags(f);
  if (f.authAddress)
    return { address: f.authAddress, ...(f.authServerName ? { serverName: f.authServerName } : {}) };
  if (f.proxyAddress) return authRouteViaProxy(f.proxyAddress);
  throw new BadParameterError("no way to reach auth: pass --proxy <host:port> (the proxy's public address)");
}

/**
 * The agent's route: the flags, else the one stored in its identity. A stored proxy whose ping
 * does not answer now still works with the name learned before (the agent keeps retrying its
 * heartbeats, as it does when auth itself is down).
 */
export async function agentAuthRoute(
  f: AuthTargetFlags,
  stored: StoredAuthRoute | undefined,
  log: { warn(obj: object, msg: string): void },
): Promise<AuthRoute> {
  checkAuthTargetFlags(f);
  if (f.authAddress) return authRouteOf(f);
  const proxy = f.proxyAddress ?? stored?.proxyAddress;
  if (proxy) {
    try {
      return await authRouteViaProxy(proxy);
    } catch (err) {
      if (hasCode(err, "unavailable") && stored?.proxyAddress === proxy && stored.authServerName) {
        log.warn(
          { proxy, err: err instanceof Error ? err.message : String(err) },
          "proxy ping failed; using the auth server name learned before",
        );
        return { address: proxy, serverName: stored.authServerName, proxy };
      }
      throw err;
    }
  }
  if (stored?.authAddress)
    return {
      address: stored.authAddress,
      ...(stored.authServerName ? { serverName: stored.authServerName } : {}),
    };
  throw new BadParameterError(
    "no way to reach auth: pass --proxy <host:port> (the proxy's public address) or --auth <host:port>",
  );
}

/** What an identity stores of a route (only the fields of its kind). */
export function storedRouteOf(r: AuthRoute): StoredAuthRoute {
  return r.proxy
    ? { proxyAddress: r.proxy, ...(r.serverName ? { authServerName: r.serverName } : {}) }
    : { authAddress: r.address, ...(r.serverName ? { authServerName: r.serverName } : {}) };
}

export const sameStoredRoute = (a: StoredAuthRoute, b: StoredAuthRoute): boolean =>
  a.authAddress === b.authAddress &&
  a.authServerName === b.authServerName &&
  a.proxyAddress === b.proxyAddress;
