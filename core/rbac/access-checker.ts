// The access decision for one identity: which principals its certificates carry, where it may log
// in, what it may do on the admin API, which options its sessions get. Pure: built from the user's
// roles and traits, no I/O. Deny always wins. No role name is special: "admin" is powerful only
// because its rules say resources ["*"] verbs ["*"].
import { parseDuration } from "../duration.ts";
import { AccessDeniedError } from "../errors.ts";
import type { Role, RoleConditions, User } from "../resources/index.ts";
import { DEFAULT_MAX_SESSION_TTL } from "../resources/role.ts";
import { allowMatches, denyMatches, type NodeLabels } from "./labels.ts";
import { globMatch } from "./match.ts";
import { expandLogin, type Traits } from "./template.ts";

export interface AccessSubject {
  name: string;
  roles: readonly Role[];
  /** The User's traits (templates {{internal.*}}). */
  traits: Traits;
  /** Traits asserted by an SSO provider ({{external.*}}); defaults to `traits`. */
  externalTraits?: Traits;
}

/** What the app decision reads from an App: its name (for the reason) and metadata.labels. */
export interface AppTarget {
  name: string;
  labels?: NodeLabels | undefined;
}

export interface Decision {
  allowed: boolean;
  reason: string;
}

/** Options merged across all roles: the most restrictive value wins. */
export interface MergedOptions {
  maxSessionTtlMs: number;
  permitPortForwarding: boolean;
  permitAgentForwarding: boolean;
  permitX11Forwarding: boolean;
  permitPty: boolean;
  permitUserRc: boolean;
  requireMfa: boolean;
  locked: boolean;
}

interface CompiledRole {
  name: string;
  allow: RoleConditions;
  deny: RoleConditions;
  allowLogins: Set<string>;
  denyLogins: Set<string>;
}

function mergeOptions(roles: readonly Role[]): MergedOptions {
  const merged: MergedOptions = {
    maxSessionTtlMs: parseDuration(DEFAULT_MAX_SESSION_TTL),
    permitPortForwarding: true,
    permitAgentForwarding: true,
    permitX11Forwarding: true,
    permitPty: true,
    permitUserRc: true,
    requireMfa: false,
    locked: false,
  };
  let ttl: number | undefined;
  for (const role of roles) {
    const o = role.spec.options ?? {};
    let roleTtl: number;
    try {
      roleTtl = parseDuration(o.max_session_ttl ?? DEFAULT_MAX_SESSION_TTL);
    } catch {
      roleTtl = 0; // an unreadable TTL must not lengthen sessions
    }
    ttl = ttl === undefined ? roleTtl : Math.min(ttl, roleTtl);
    // Unset permits take the schema defaults (X11 is off unless every role turns it on).
    merged.permitPortForwarding &&= o.permit_port_forwarding ?? true;
    merged.permitAgentForwarding &&= o.permit_agent_forwarding ?? true;
    merged.permitX11Forwarding &&= o.permit_x11_forwarding ?? false;
    merged.permitPty &&= o.permit_pty ?? true;
    merged.permitUserRc &&= o.permit_user_rc ?? true;
    merged.requireMfa ||= o.require_mfa ?? false;
    merged.locked ||= o.lock ?? false;
  }
  if (ttl !== undefined) merged.maxSessionTtlMs = ttl;
  if (roles.length === 0) merged.permitX11Forwarding = false;
  return merged;
}

function ruleGrants(c: RoleConditions, resource: string, verb: string): boolean {
  return (c.rules ?? []).some(
    (r) =>
      (r.resources.includes("*") || r.resources.includes(resource)) &&
      (r.verbs.includes("*") || r.verbs.includes(verb)),
  );
}

export class AccessChecker {
  readonly userName: string;
  readonly roleNames: readonly string[];
  readonly #roles: CompiledRole[];
  readonly #options: MergedOptions;
  readonly #denyLogins: Set<string>;

  constructor(subject: AccessSubject) {
    this.userName = subject.name;
    this.roleNames = subject.roles.map((r) => r.metadata.name);
    const external = subject.externalTraits ?? subject.traits;
    const expand = (logins: readonly string[] | undefined) =>
      new Set((logins ?? []).flatMap((l) => expandLogin(l, subject.traits, external)));
    this.#roles = subject.roles.map((role) => ({
      name: role.metadata.name,
      allow: role.spec.allow ?? {},
      deny: role.spec.deny ?? {},
      allowLogins: expand(role.spec.allow?.logins),
      denyLogins: expand(role.spec.deny?.logins),
    }));
    this.#denyLogins = new Set(this.#roles.flatMap((r) => [...r.denyLogins]));
    this.#options = mergeOptions(subject.roles);
  }

  /** Session options merged across the roles (a copy). */
  options(): MergedOptions {
    return { ...this.#options };
  }

  #lockedBy(): string | undefined {
    return this.#options.locked ? "locked by a role option" : undefined;
  }

  /** The role whose deny node_labels match, if any. */
  #nodeDeniedBy(labels: NodeLabels): string | undefined {
    return this.#roles.find((r) => denyMatches(r.deny.node_labels, labels))?.name;
  }

  canSeeNode(labels: NodeLabels): boolean {
    if (this.#lockedBy()) return false;
    if (this.#nodeDeniedBy(labels) !== undefined) return false;
    return this.#roles.some((r) => allowMatches(r.allow.node_labels, labels));
  }

  /**
   * May this identity reach the app (its name and metadata.labels) through the proxy? Exactly the
   * node rule on app_labels: a deny match in any role wins, else some role's allow must match
   * (a role without app_labels grants no app). The reason names the deciding role.
   */
  checkAppAccess(app: AppTarget): Decision {
    const locked = this.#lockedBy();
    if (locked) return { allowed: false, reason: locked };
    const labels = app.labels ?? {};
    const deny = this.#roles.find((r) => denyMatches(r.deny.app_labels, labels));
    if (deny) return { allowed: false, reason: `app "${app.name}" denied by role "${deny.name}"` };
    const grant = this.#roles.find((r) => allowMatches(r.allow.app_labels, labels));
    if (grant) return { allowed: true, reason: `app "${app.name}" allowed by role "${grant.name}"` };
    return { allowed: false, reason: `no role allows app "${app.name}"` };
  }

  /** checkAppAccess as a boolean (listing apps). */
  canAccessApp(app: AppTarget): boolean {
    return this.checkAppAccess(app).allowed;
  }

  /** Throws AccessDeniedError naming the app (no role detail) when checkAppAccess denies. */
  assertAppAccess(app: AppTarget): void {
    if (!this.canAccessApp(app)) throw new AccessDeniedError(`access denied: app ${app.name}`);
  }

  /**
   * The principals a certificate gets: allowed logins (templates expanded) minus denied ones.
   * With node labels, only logins a role grants on that node (and none if the node is denied).
   */
  loginsFor(nodeLabels?: NodeLabels): string[] {
    if (this.#lockedBy()) return [];
    if (nodeLabels && this.#nodeDeniedBy(nodeLabels) !== undefined) return [];
    const out = new Set<string>();
    for (const role of this.#roles) {
      if (nodeLabels && !allowMatches(role.allow.node_labels, nodeLabels)) continue;
      for (const login of role.allowLogins) if (!this.#denyLogins.has(login)) out.add(login);
    }
    return [...out].sort();
  }

  canLogin(login: string, nodeLabels: NodeLabels): Decision {
    const locked = this.#lockedBy();
    if (locked) return { allowed: false, reason: locked };
    const denyLogin = this.#roles.find((r) => r.denyLogins.has(login));
    if (denyLogin) return { allowed: false, reason: `login "${login}" denied by role "${denyLogin.name}"` };
    const denyNode = this.#nodeDeniedBy(nodeLabels);
    if (denyNode) return { allowed: false, reason: `node denied by role "${denyNode}"` };
    const grant = this.#roles.find(
      (r) => r.allowLogins.has(login) && allowMatches(r.allow.node_labels, nodeLabels),
    );
    if (grant) return { allowed: true, reason: `allowed by role "${grant.name}"` };
    return { allowed: false, reason: `no role allows login "${login}" on this node` };
  }

  /** May this identity apply `verb` to `resource` (rule names such as "users", "tokens")? */
  can(resource: string, verb: string): boolean {
    return this.decide(resource, verb).allowed;
  }

  decide(resource: string, verb: string): Decision {
    const locked = this.#lockedBy();
    if (locked) return { allowed: false, reason: locked };
    const deny = this.#roles.find((r) => ruleGrants(r.deny, resource, verb));
    if (deny) return { allowed: false, reason: `${verb} ${resource} denied by role "${deny.name}"` };
    const grant = this.#roles.find((r) => ruleGrants(r.allow, resource, verb));
    if (grant) return { allowed: true, reason: `allowed by role "${grant.name}"` };
    return { allowed: false, reason: `no role allows ${verb} ${resource}` };
  }

  /** Throws AccessDeniedError (without internal detail) when `can` is false. */
  assertCan(resource: string, verb: string): void {
    if (!this.can(resource, verb)) throw new AccessDeniedError(`access denied: ${verb} ${resource}`);
  }

  /** May a workload with this SPIFFE ID path (e.g. "/svc/ci/deploy") assume these roles? */
  spiffeAllowed(path: string): boolean {
    if (this.#lockedBy()) return false;
    if (this.#roles.some((r) => (r.deny.workload_spiffe_ids ?? []).some((g) => globMatch(g, path))))
      return false;
    return this.#roles.some((r) => (r.allow.workload_spiffe_ids ?? []).some((g) => globMatch(g, path)));
  }
}

export function newAccessChecker(subject: AccessSubject): AccessChecker {
  return new AccessChecker(subject);
}

export interface UserAccess {
  checker: AccessChecker;
  /** Role names the User lists that do not exist (or were not valid); they grant nothing. */
  missingRoles: string[];
}

/**
 * Builds the checker for a User resource, resolving its roles with `getRole` (e.g. the resource
 * source). A disabled User gets a checker that allows nothing.
 */
export function accessForUser(
  user: User,
  getRole: (name: string) => Role | undefined,
  externalTraits?: Traits,
): UserAccess {
  const roles: Role[] = [];
  const missingRoles: string[] = [];
  for (const name of user.spec.roles) {
    const role = getRole(name);
    // A Role being deleted (deletionTimestamp set, held by a finalizer) grants nothing any more.
    if (role && !role.metadata.deletionTimestamp) roles.push(role);
    else missingRoles.push(name);
  }
  const subject: AccessSubject = {
    name: user.metadata.name,
    roles: user.spec.disabled || user.metadata.deletionTimestamp ? [] : roles,
    traits: user.spec.traits ?? {},
  };
  if (externalTraits) subject.externalTraits = externalTraits;
  return { checker: new AccessChecker(subject), missingRoles };
}
