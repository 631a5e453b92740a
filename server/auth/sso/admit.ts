// Who an external identity becomes here, or why it is refused: its user name, the roles the
// connector's claims_to_roles give it, its claims (bounded) as traits, and how long its session
// may last. The rules of docs/sso-security.md "The model"; everything stateful is a callback.

import { parseDuration } from "../../../core/duration.ts";
import { AccessDeniedError, NotAuthenticatedError } from "../../../core/errors.ts";
import type { Connector } from "../../../core/resources/index.ts";
import { boundClaims, mapClaimsToRoles, ssoUserName } from "./mapping.ts";
import type { ExternalIdentity } from "./protocol.ts";

export interface Admission {
  name: string;
  roles: string[];
  claims: Record<string, string[]>;
  /** Latest end of a session from this login. */
  notAfter: Date;
}

export interface AdmitContext {
  now: Date;
  /** auth.session_ttl */
  sessionTtlMs: number;
  /** A User resource holds the name. */
  isLocalUser(name: string): boolean;
  /** The connector of the name's live SSO record, if any. */
  liveConnectorOf(name: string): Promise<string | undefined>;
  roleExists(name: string): boolean;
  /** Filled in as the checks learn them, for the audit event of a refusal. */
  seen: { username: string; claimNames?: string[] };
}

export async function admitIdentity(
  connector: Connector,
  identity: ExternalIdentity,
  ctx: AdmitContext,
): Promise<Admission> {
  const now = ctx.now.getTime();
  const name = ssoUserName(identity.username);
  ctx.seen.username = name ?? "";
  const claims = boundClaims(identity.claims);
  ctx.seen.claimNames = Object.keys(claims).sort();
  if (!name) throw new AccessDeniedError("the identity's user name is not usable here");
  if (ctx.isLocalUser(name))
    throw new AccessDeniedError(`${name} is a local user: single sign-on never logs in as a local user`);
  const live = await ctx.liveConnectorOf(name);
  if (live !== undefined && live !== connector.metadata.name)
    throw new AccessDeniedError(`${name} is signed in through another connector until its sessions end`);
  const roles = mapClaimsToRoles(connector.spec.claims_to_roles, claims).filter((r) => ctx.roleExists(r));
  if (roles.length === 0) throw new AccessDeniedError(`no role maps to ${name}'s identity`);
  const caps = [now + ctx.sessionTtlMs];
  const max = connector.spec.settings.max_session_ttl;
  if (max) caps.push(now + parseDuration(max));
  if (identity.notAfter) caps.push(identity.notAfter.getTime());
  const notAfter = new Date(Math.min(...caps));
  if (notAfter.getTime() <= now) throw new NotAuthenticatedError("the identity provider's session has ended");
  return { name, roles, claims, notAfter };
}
