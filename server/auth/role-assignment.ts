// Who may put which roles on an identity (CreateUser, CreateAgentIdentity), or take one over
// (CreatePasswordReset hands the caller a way into the account). `users/create`,
// `agent_identities/create` or `users/update` admit the call; what it hands out is a second
// decision, made here: the caller gives away nothing it does not have itself, unless a rule grants
// `roles: assign` (deny wins, as everywhere; the admin preset has it through its `*` rules).
// "Nothing it does not have" means, for a caller without `roles: assign`:
//   - every role given is one the caller holds;
//   - every role of the caller that denies something (a non-empty `deny`) comes along, or leaving
//     it out would hand over what it denies the caller;
//   - the merged options are no looser than the caller's (shorter or equal max_session_ttl, no
//     permit_* the caller lacks, require_mfa kept);
//   - every trait value (the `logins` a role's {{internal.logins}} expands to) is the caller's own.
// Otherwise a user manager could mint an admin, or a user with logins [root] (docs/rbac.md).
import { AccessDeniedError } from "../../core/errors.ts";
import { AccessChecker, type MergedOptions } from "../../core/rbac/access-checker.ts";
import type { Traits } from "../../core/rbac/template.ts";
import type { Role } from "../../core/resources/index.ts";

export const ASSIGN_ANY_ROLE = { resource: "roles", verb: "assign" } as const;

/** The caller: its current checker (undefined when it may not act) and its own traits. */
export interface Assigner {
  checker: AccessChecker;
  traits: Traits;
}

/** What the identity would hold: role names and the traits its role templates expand. */
export interface Assignment {
  roles: readonly string[];
  traits?: Traits;
}

const denies = (role: Role | undefined): boolean =>
  Object.values(role?.spec.deny ?? {}).some((v) =>
    Array.isArray(v) ? v.length > 0 : v !== null && typeof v === "object" && Object.keys(v).length > 0,
  );

/** The option names in which `theirs` allows more than `mine`. */
function looserOptions(theirs: MergedOptions, mine: MergedOptions): string[] {
  const out: string[] = [];
  if (theirs.maxSessionTtlMs > mine.maxSessionTtlMs) out.push("max_session_ttl");
  const permits: Array<[keyof MergedOptions, string]> = [
    ["permitPortForwarding", "permit_port_forwarding"],
    ["permitAgentForwarding", "permit_agent_forwarding"],
    ["permitX11Forwarding", "permit_x11_forwarding"],
    ["permitPty", "permit_pty"],
    ["permitUserRc", "permit_user_rc"],
  ];
  for (const [key, name] of permits) if (theirs[key] && !mine[key]) out.push(name);
  if (mine.requireMfa && !theirs.requireMfa) out.push("require_mfa");
  return out;
}

export function assertMayAssign(
  caller: Assigner | undefined,
  grant: Assignment,
  getRole: (name: string) => Role | undefined,
): void {
  if (!caller) throw new AccessDeniedError("not allowed to assign roles");
  if (caller.checker.can(ASSIGN_ANY_ROLE.resource, ASSIGN_ANY_ROLE.verb)) return;
  // No roles: the identity holds nothing (the handlers refuse that on their own).
  if (grant.roles.length === 0) return;
  const problems: string[] = [];
  const held = new Set(caller.checker.roleNames);
  const foreign = grant.roles.filter((r) => !held.has(r));
  if (foreign.length > 0) problems.push(`role(s) you do not hold: ${foreign.join(", ")}`);
  const given = new Set(grant.roles);
  const dropped = caller.checker.roleNames.filter((r) => !given.has(r) && denies(getRole(r)));
  if (dropped.length > 0)
    problems.push(`your role(s) that deny something must come along: ${dropped.join(", ")}`);
  const roles = grant.roles.flatMap((r) => getRole(r) ?? []);
  const theirs = new AccessChecker({ name: "", roles, traits: grant.traits ?? {} }).options();
  const looser = looserOptions(theirs, caller.checker.options());
  if (looser.length > 0) problems.push(`options looser than yours: ${looser.join(", ")}`);
  for (const [trait, values] of Object.entries(grant.traits ?? {})) {
    const own = new Set(caller.traits[trait] ?? []);
    const extra = values.filter((v) => !own.has(v));
    if (extra.length > 0) problems.push(`${trait} you do not have: ${extra.join(", ")}`);
  }
  if (problems.length > 0) {
    throw new AccessDeniedError(
      `not allowed to give away more than you have (needs rule roles: assign): ${problems.join("; ")}`,
    );
  }
}
