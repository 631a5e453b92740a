// What goes into every user certificate auth signs (IssueUserCerts, bots, SPIFFE workloads): the
// permit-* extensions from the merged role options, the signed identity extension the node-side
// decision reads (core/rbac/cert-identity.ts), and the principals. One place, so the three issuers
// cannot drift apart (docs/rbac.md, "Where each decision is made").
import type { Backend } from "../../core/backend/backend.ts";
import { type SshCertExtension, sealValueExtensions } from "../../core/certs/ssh-cert.ts";
import { sshFingerprint } from "../../core/certs/ssh-keys.ts";
import type { Clock } from "../../core/clock.ts";
import { AccessDeniedError, NotFoundError } from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import type { AccessChecker } from "../../core/rbac/access-checker.ts";
import { type CertIdentity, encodeCertIdentity, nodePrincipal } from "../../core/rbac/cert-identity.ts";
import type { Traits } from "../../core/rbac/template.ts";
import { cachedAgentlessNodes, listAgentlessIds } from "./agentless-index.ts";
import { NodeStore } from "./nodes.ts";

/** OpenSSH refuses certificates with more principals than this (and so does our signer). */
export const MAX_CERT_PRINCIPALS = 256;

/** Per checker: its merged options are fixed when it is built. */
const extensionsOf = new WeakMap<AccessChecker, readonly SshCertExtension[]>();

export function sshExtensionsOf(checker: AccessChecker): readonly SshCertExtension[] {
  let out = extensionsOf.get(checker);
  if (!out) {
    out = Object.freeze(permitExtensions(checker));
    extensionsOf.set(checker, out);
  }
  return out;
}

function permitExtensions(checker: AccessChecker): SshCertExtension[] {
  const o = checker.options();
  const out: SshCertExtension[] = [];
  if (o.permitPty) out.push("permit-pty");
  if (o.permitPortForwarding) out.push("permit-port-forwarding");
  if (o.permitAgentForwarding) out.push("permit-agent-forwarding");
  if (o.permitX11Forwarding) out.push("permit-X11-forwarding");
  if (o.permitUserRc) out.push("permit-user-rc");
  return out;
}

export function identityExtension(identity: CertIdentity): Record<string, string> {
  return encodeCertIdentity(identity);
}

/** The last identity extension built per checker, with what it was built from. */
const userIdentities = new WeakMap<
  AccessChecker,
  { name: string; traits: Traits | undefined; ext: Readonly<Record<string, string>> }
>();

/**
 * A user's identity extension, sealed (ssh-cert.ts sealValueExtensions) so the signer caches its
 * encoding by identity. The same for every certificate of a user until a role or the user changes:
 * a checker's role names are fixed, and sources replace a User object on every change rather than
 * edit it (core/sources/cache.ts), so the same checker, name and traits object is the same content.
 */
export function userIdentityExtension(
  checker: AccessChecker,
  name: string,
  traits: Traits | undefined,
): Readonly<Record<string, string>> {
  const hit = userIdentities.get(checker);
  if (hit && hit.name === name && hit.traits === traits) return hit.ext;
  const ext = sealValueExtensions(
    identityExtension({ kind: "user", name, roles: [...checker.roleNames], traits: traits ?? {} }),
  );
  userIdentities.set(checker, { name, traits, ext });
  return ext;
}

/**
 * The nodes certPrincipals needs, from the state backend so every auth replica sees the same.
 * Unscoped (the common case, once per certificate): only the agentless ones, through their small
 * index, since only they get extra principals (cached briefly: agentless-index.ts). Scoped to a
 * node: every node, read fresh, to find that one.
 */
export function principalNodes(
  backend: Backend,
  clock: Clock,
  o: { scoped?: boolean } = {},
): Promise<PrincipalNode[]> {
  // The cached promise itself (an async function would wrap it in another one per call).
  if (!o.scoped) return cachedAgentlessNodes(backend, clock);
  return allNodes(backend, clock);
}

async function allNodes(backend: Backend, clock: Clock): Promise<PrincipalNode[]> {
  const store = new NodeStore({ backend, clock });
  const agentless = await listAgentlessIds(backend);
  const set = new Set(agentless);
  return (await store.list()).map((n) => ({
    id: n.id,
    hostname: n.hostname,
    labels: n.labels,
    agentless: set.has(n.id),
  }));
}

/** A node as the principal computation needs it. */
export interface PrincipalNode {
  id: string;
  hostname: string;
  labels: Record<string, string>;
  agentless: boolean;
}

/** Per checker: its roles and lock option are fixed when it is built, so are the logins. */
const loginsOf = new WeakMap<AccessChecker, readonly string[]>();

function unscopedLogins(checker: AccessChecker): readonly string[] {
  let logins = loginsOf.get(checker);
  if (!logins) {
    logins = Object.freeze(checker.loginsFor());
    loginsOf.set(checker, logins);
  }
  return logins;
}

/**
 * The principals of a certificate.
 * - Plain logins (every login the roles grant somewhere): agent nodes accept a login only after
 *   auth's per-node decision (AuthorizeSshLogin), so a plain login opens nothing by itself there.
 * - "<login>@<node id>" for each agentless node the identity may use with that login: plain sshd
 *   cannot ask auth, so its AuthorizedPrincipalsCommand accepts only these (docs/agent.md).
 * With `scope` (a hostname or node ID) only that node's logins are listed.
 */
export function certPrincipals(
  checker: AccessChecker,
  nodes: readonly PrincipalNode[],
  scope?: string,
): string[] {
  if (scope) {
    const node = nodes.find((n) => (n.id === scope || n.hostname === scope) && checker.canSeeNode(n.labels));
    if (!node) throw new NotFoundError(`unknown node ${JSON.stringify(scope)}`);
    const logins = checker.loginsFor(node.labels);
    if (logins.length === 0) throw new AccessDeniedError("the user's roles grant no logins on this node");
    return node.agentless ? [...logins, ...logins.map((l) => nodePrincipal(l, node.id))] : logins;
  }
  const out = [...unscopedLogins(checker)];
  if (out.length === 0) return out;
  for (const node of nodes) {
    if (!node.agentless) continue;
    for (const login of checker.loginsFor(node.labels)) {
      // Past the limit the certificate still works on agent nodes; agentless nodes then need a
      // certificate scoped to them (`svc certs --node`), which the error message of sshd won't say,
      // so docs/agent.md does.
      if (out.length >= MAX_CERT_PRINCIPALS) return out;
      out.push(nodePrincipal(login, node.id));
    }
  }
  return out;
}

/** The `cert.create` event of a user certificate: what the audit log keeps of it (no key, no secret). */
export function userCertCreatedEvent(c: {
  emittedBy: string;
  username: string;
  keyId: string;
  serial: bigint;
  principals: string[];
  validBefore: Date;
  publicKeyBlob: Buffer;
}): { event_type: string; user_name: string; success: boolean; fields: JsonObject } {
  return {
    event_type: "cert.create",
    user_name: c.username,
    success: true,
    fields: {
      emitted_by: c.emittedBy,
      cert_type: "user",
      key_id: c.keyId,
      serial: c.serial.toString(),
      principals: c.principals,
      // As the certificate carries it: whole seconds, rounded down (the signer's encoding).
      valid_before: new Date(Math.floor(c.validBefore.getTime() / 1000) * 1000).toISOString(),
      public_key_fingerprint: sshFingerprint(c.publicKeyBlob),
    },
  };
}
