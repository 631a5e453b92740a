// Which App a host name reaches. Two Apps can claim one host (an explicit public_addr equal to
// another App's default `<name>.<proxy host>`, or two equal public_addr values); neither schema
// nor CEL can see across objects, so the lookup refuses an ambiguous host instead of picking one.
import { type AppSpec, appPublicHost, isAppHostOf } from "./app.ts";

interface AppLike {
  metadata: { name: string };
  spec: AppSpec;
}

/** Host (lower-case, no port) -> names of the Apps claiming it, for hosts claimed more than once. */
export function appHostConflicts(apps: readonly AppLike[], proxyHost: string): Map<string, string[]> {
  const byHost = new Map<string, string[]>();
  for (const app of apps) {
    const host = appPublicHost(app, proxyHost);
    byHost.set(host, [...(byHost.get(host) ?? []), app.metadata.name]);
  }
  for (const [host, names] of byHost) if (names.length < 2) byHost.delete(host);
  return byHost;
}

/**
 * The one App reached at `host`; undefined when none claims it, when several do, or when the host
 * is not one label under the proxy's host (the wildcard certificate and the router cover no other).
 */
export function appAtHost<A extends AppLike>(
  apps: readonly A[],
  host: string,
  proxyHost: string,
): A | undefined {
  const wanted = host.toLowerCase();
  if (!isAppHostOf(wanted, proxyHost.toLowerCase())) return undefined;
  const found = apps.filter((a) => appPublicHost(a, proxyHost) === wanted);
  return found.length === 1 ? found[0] : undefined;
}
