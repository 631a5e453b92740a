// Who may put which roles on an identity (CreateUser, CreateAgentIdentity). `users/create` or
// `agent_identities/create` admit the call; the roles it hands out need more: a caller may assign
// a role it holds itself (it gives away nothing it does not have), and any other role only with
// the explicit rule `roles: assign` (deny wins, as everywhere). The admin preset has it through
// its `*` rules. Otherwise a user manager could mint an admin (docs/rbac.md).
import { AccessDeniedError } from "../../core/errors.ts";
import type { AccessChecker } from "../../core/rbac/access-checker.ts";

export const ASSIGN_ANY_ROLE = { resource: "roles", verb: "assign" } as const;

export function assertMayAssign(caller: AccessChecker | undefined, roles: readonly string[]): void {
  if (!caller) throw new AccessDeniedError("not allowed to assign roles");
  if (caller.can(ASSIGN_ANY_ROLE.resource, ASSIGN_ANY_ROLE.verb)) return;
  const held = new Set(caller.roleNames);
  const foreign = roles.filter((r) => !held.has(r));
  if (foreign.length > 0) {
    throw new AccessDeniedError(
      `not allowed to assign role(s) you do not hold: ${foreign.join(", ")} (needs rule roles: assign)`,
    );
  }
}
