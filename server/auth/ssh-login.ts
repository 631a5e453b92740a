// AuthorizeSshLogin: the node-side login decision. An agent presents the user certificate a
// client logged in with and the login asked for; auth verifies the certificate (user CA, validity,
// principal), reads the identity it carries, keeps only the roles that identity still holds now,
// and asks the one AccessChecker about the login on the calling node's labels. The node's labels
// come from auth's own record of that agent ID (never from the request), so a node cannot borrow
// another's labels. Any doubt is a refusal.
import type { KeyObject } from "node:crypto";
import { verifySshCertificate } from "../../core/certs/ssh-cert.ts";
import type { Clock } from "../../core/clock.ts";
import { AccessDeniedError, BadParameterError } from "../../core/errors.ts";
import type { LockSubject } from "../../core/locks/lock.ts";
import { AccessChecker } from "../../core/rbac/access-checker.ts";
import { type CertIdentity, decodeCertIdentity } from "../../core/rbac/cert-identity.ts";
import type { Traits } from "../../core/rbac/template.ts";
import type { Role } from "../../core/resources/index.ts";
import type { AuthorizeSshLoginRequest__Output } from "../../proto/generated/svc/v1/AuthorizeSshLoginRequest.ts";
import type { AuthorizeSshLoginResponse } from "../../proto/generated/svc/v1/AuthorizeSshLoginResponse.ts";

export interface SshLoginDeps {
  clock: Clock;
  /** the user CA public keys (OpenSSH lines) certificates must be signed by */
  userCaKeys: () => Promise<readonly (string | KeyObject)[]>;
  getRole: (name: string) => Role | undefined;
  /**
   * What an identity holds right now: its role names (and, for users, its traits), or undefined
   * when it may not act at all (deleted, disabled, locked).
   */
  current: (identity: CertIdentity) => Promise<{ roles: readonly string[]; traits?: Traits } | undefined>;
  /** The labels of the calling agent's node record; undefined for an unknown node. */
  nodeLabels: (agentId: string) => Promise<Record<string, string> | undefined>;
  /** "locked: <message>" when a lock covers this subject (docs/locks.md), else undefined. */
  lockRefusal?: (subject: LockSubject) => string | undefined;
}

const MAX_CERT_LINE = 64 * 1024;

export async function authorizeSshLogin(
  req: AuthorizeSshLoginRequest__Output,
  agentId: string,
  d: SshLoginDeps,
): Promise<AuthorizeSshLoginResponse> {
  if (!req.login || req.login.length > 255) throw new BadParameterError("login is required");
  if (!req.ssh_certificate || req.ssh_certificate.length > MAX_CERT_LINE)
    throw new BadParameterError("ssh_certificate is required");
  const cert = verifySshCertificate(req.ssh_certificate, {
    trustedCaKeys: await d.userCaKeys(),
    type: "user",
    clock: d.clock,
    principal: req.login,
  });
  const identity = decodeCertIdentity(cert.extensionValues);
  // Locks on the identity, any role the certificate carries, its key id, or this node.
  const locked = d.lockRefusal?.({
    ...(identity.kind === "user" ? { user: identity.name } : {}),
    ...(identity.kind === "bot" ? { bot: identity.name } : {}),
    roles: identity.roles,
    node: agentId,
    keyId: cert.keyId,
  });
  if (locked !== undefined) throw new AccessDeniedError(locked);
  const labels = await d.nodeLabels(agentId);
  if (!labels) throw new AccessDeniedError("this node is not registered");
  const current = await d.current(identity);
  if (!current) throw new AccessDeniedError(`${identity.kind} ${identity.name} may not log in any more`);
  // A role lock also covers whoever holds the role now, whatever the certificate carries.
  const lockedNow = d.lockRefusal?.({
    ...(identity.kind === "user" ? { user: identity.name } : {}),
    ...(identity.kind === "bot" ? { bot: identity.name } : {}),
    roles: current.roles,
  });
  if (lockedNow !== undefined) throw new AccessDeniedError(lockedNow);
  // The certificate's roles, minus any the identity has lost since it was issued.
  const held = new Set(current.roles);
  const roles: Role[] = [];
  for (const name of identity.roles) {
    const role = held.has(name) ? d.getRole(name) : undefined;
    if (role && !role.metadata.deletionTimestamp) roles.push(role);
  }
  const checker = new AccessChecker({
    name: identity.name,
    roles,
    traits: current.traits ?? identity.traits,
  });
  const decision = checker.canLogin(req.login, labels);
  if (!decision.allowed)
    throw new AccessDeniedError(`login ${JSON.stringify(req.login)}: ${decision.reason}`);
  return {
    kind: identity.kind,
    name: identity.name,
    roles: roles.map((r) => r.metadata.name),
    reason: decision.reason,
  };
}
