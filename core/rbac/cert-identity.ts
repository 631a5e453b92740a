// The identity a user certificate carries to the node: who (a user, a bot or a SPIFFE workload),
// which roles and which traits it was issued under. Auth writes it into a signed vendor extension
// of every user certificate; the node-side decision (auth's AuthorizeSshLogin, docs/rbac.md) reads
// it back and runs the one AccessChecker against the node's labels. OpenSSH ignores the
// extension, which is why agentless nodes get node-scoped principals instead (nodePrincipal).
import { BadParameterError, NotAuthenticatedError } from "../errors.ts";
import type { Traits } from "./template.ts";

/** The extension's name (vendor extensions are "name@domain" in PROTOCOL.certkeys). */
export const CERT_IDENTITY_EXTENSION = "svc-identity@svc.dev";

export type CertIdentityKind = "user" | "bot" | "workload";

export interface CertIdentity {
  kind: CertIdentityKind;
  /** user name, bot name, or the workload's SPIFFE ID */
  name: string;
  /** the role names the certificate was issued under */
  roles: string[];
  /** internal traits used to expand login templates */
  traits: Traits;
}

const KINDS: readonly CertIdentityKind[] = ["user", "bot", "workload"];

export function encodeCertIdentity(id: CertIdentity): Record<string, string> {
  return {
    [CERT_IDENTITY_EXTENSION]: JSON.stringify({
      kind: id.kind,
      name: id.name,
      roles: id.roles,
      traits: id.traits,
    }),
  };
}

function stringList(v: unknown, what: string): string[] {
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string"))
    throw new BadParameterError(`certificate identity ${what} must be a list of strings`);
  return v as string[];
}

/**
 * The identity of a (verified) certificate's extension values. A certificate without one (issued
 * before this extension existed, or by someone else's tool with our CA) carries no roles and so
 * is refused everywhere a node-scoped decision is needed.
 */
export function decodeCertIdentity(extensionValues: Readonly<Record<string, string>>): CertIdentity {
  const raw = extensionValues[CERT_IDENTITY_EXTENSION];
  if (raw === undefined) throw new NotAuthenticatedError("certificate carries no svc identity");
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw new BadParameterError("certificate identity is not JSON");
  }
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new BadParameterError("certificate identity must be an object");
  const o = v as Record<string, unknown>;
  if (typeof o.kind !== "string" || !(KINDS as readonly string[]).includes(o.kind))
    throw new BadParameterError("certificate identity has an unknown kind");
  if (typeof o.name !== "string" || o.name === "")
    throw new BadParameterError("certificate identity has no name");
  const traits: Record<string, string[]> = {};
  if (o.traits !== undefined) {
    if (o.traits === null || typeof o.traits !== "object" || Array.isArray(o.traits))
      throw new BadParameterError("certificate identity traits must be an object");
    for (const [k, val] of Object.entries(o.traits)) traits[k] = stringList(val, `trait ${k}`);
  }
  return { kind: o.kind as CertIdentityKind, name: o.name, roles: stringList(o.roles, "roles"), traits };
}

/**
 * The principal an agentless OpenSSH node accepts for `login`: sshd's AuthorizedPrincipalsCommand
 * on that node prints exactly this (docs/agent.md), so a plain login in a certificate is not
 * enough there; only a certificate issued for that node and login is.
 */
export function nodePrincipal(login: string, nodeId: string): string {
  return `${login}@${nodeId}`;
}
