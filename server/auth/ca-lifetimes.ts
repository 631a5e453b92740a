// How long certificates a CA key signed can still be valid, from what only auth knows at run time
// (docs/ca-rotation.md, "Waiting out the old key"): a role's max_session_ttl bounds user
// certificates, and agentless nodes hold host certificates for as long as they were issued for
// (they cannot renew). A rotation switching keys waits this long before the old key may go.
import type { Backend } from "../../core/backend/backend.ts";
import type { CaType } from "../../core/ca/rotation.ts";
import { SSH_HOST_CERT_TTL_SECONDS } from "../../core/certs/key-ids.ts";
import type { Clock } from "../../core/clock.ts";
import { parseDuration } from "../../core/duration.ts";
import { DEFAULT_MAX_SESSION_TTL } from "../../core/resources/role.ts";
import type { ResourceSource } from "../../core/sources/source.ts";
import { listAgentRegistrations } from "./join-agent.ts";

export interface RuntimeLifetimeDeps {
  source: Pick<ResourceSource, "list">;
  backend: Backend;
  clock: Clock;
}

/** The longest max_session_ttl any Role grants (seconds); unreadable ones count as the default. */
export function longestRoleSessionSeconds(source: Pick<ResourceSource, "list">): number {
  let longest = parseDuration(DEFAULT_MAX_SESSION_TTL);
  for (const role of source.list("Role")) {
    try {
      longest = Math.max(
        longest,
        parseDuration(role.spec.options?.max_session_ttl ?? DEFAULT_MAX_SESSION_TTL),
      );
    } catch {
      // the access checker never issues longer than the default for such a role
    }
  }
  return longest / 1000;
}

/** How long the host certificates nodes hold now stay valid (seconds from now; 0 without nodes). */
export async function longestNodeCertificateSeconds(backend: Backend, now: Date): Promise<number> {
  let longest = 0;
  for (const reg of await listAgentRegistrations(backend)) {
    const until = reg.certs_expire ? Date.parse(reg.certs_expire) : Number.NaN;
    // An agentless registration from before expiry was recorded: the lifetime it was issued with.
    const left = Number.isFinite(until)
      ? (until - now.getTime()) / 1000
      : reg.agentless
        ? SSH_HOST_CERT_TTL_SECONDS
        : 0;
    longest = Math.max(longest, left);
  }
  return Math.ceil(longest);
}

export function runtimeCaLifetime(d: RuntimeLifetimeDeps): (type: CaType) => Promise<number> {
  return async (type) => {
    if (type === "user_ssh") return longestRoleSessionSeconds(d.source);
    if (type === "host_ssh" || type === "host_x509")
      return longestNodeCertificateSeconds(d.backend, d.clock.now());
    return 0;
  };
}
