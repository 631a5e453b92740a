// Admin RPCs behind `svcctl users add|rm|reset` and the unauthenticated ResetPassword
// (docs/cli.md). Who may call them is decided by the authz table (users/create, users/delete,
// users/update via core/rbac); these handlers only act. User resources are written through the
// ResourceWriter auth was given (the folder source embedded, Kubernetes otherwise).
import type { Clock } from "../../core/clock.ts";
import {
  AlreadyExistsError,
  BadParameterError,
  NotFoundError,
  NotImplementedError,
} from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import { API_VERSION, type User } from "../../core/resources/index.ts";
import type { ResourceSource, ResourceWriter } from "../../core/sources/source.ts";
import type { CreatePasswordResetRequest__Output } from "../../proto/generated/svc/v1/CreatePasswordResetRequest.ts";
import type { CreateUserRequest__Output } from "../../proto/generated/svc/v1/CreateUserRequest.ts";
import type { CreateUserResponse } from "../../proto/generated/svc/v1/CreateUserResponse.ts";
import type { DeleteUserRequest__Output } from "../../proto/generated/svc/v1/DeleteUserRequest.ts";
import type { PasswordResetToken } from "../../proto/generated/svc/v1/PasswordResetToken.ts";
import type { ResetPasswordRequest__Output } from "../../proto/generated/svc/v1/ResetPasswordRequest.ts";
import type { ResetPasswordResponse } from "../../proto/generated/svc/v1/ResetPasswordResponse.ts";
import { checkUserName, type PasswordResets } from "./admin-password-reset.ts";
import { type Caller, callerLabel } from "./caller.ts";

const LOGIN = /^[a-z_][a-z0-9_.-]{0,31}$/;

export interface AdminUsersDeps {
  source: ResourceSource;
  writer?: ResourceWriter;
  clock: Clock;
  resets: PasswordResets;
  revokeSessions(username: string): Promise<number>;
  audit(event: {
    event_type: string;
    user_name: string;
    success: boolean;
    fields: JsonObject;
  }): Promise<unknown>;
}

export class AdminUsers {
  readonly #d: AdminUsersDeps;

  constructor(deps: AdminUsersDeps) {
    this.#d = deps;
  }

  #writer(): ResourceWriter {
    if (!this.#d.writer) throw new NotImplementedError("this auth server cannot write resources");
    return this.#d.writer;
  }

  #answer(r: { username: string; token: string; expires: Date }, revoked = 0): PasswordResetToken {
    return {
      username: r.username,
      token: r.token,
      expires_unix_ms: r.expires.getTime(),
      revoked_sessions: revoked,
    };
  }

  async create(req: CreateUserRequest__Output, caller: Caller): Promise<CreateUserResponse> {
    const name = checkUserName(req.name);
    const roles = [...new Set(req.roles ?? [])];
    if (roles.length === 0) throw new BadParameterError("a user needs at least one role");
    const unknown = roles.filter((r) => !this.#d.source.get("Role", r));
    if (unknown.length > 0) throw new BadParameterError(`unknown role(s): ${unknown.join(", ")}`);
    const logins = [...new Set(req.logins ?? [])];
    const bad = logins.find((l) => !LOGIN.test(l));
    if (bad !== undefined)
      throw new BadParameterError(`login ${JSON.stringify(bad)} is not a valid Unix login`);
    if (this.#d.source.get("User", name)) throw new AlreadyExistsError(`user ${name} already exists`);
    const user: User = {
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name },
      spec: { roles, ...(logins.length > 0 ? { traits: { logins } } : {}) },
    };
    await this.#writer().apply(user);
    const reset = await this.#d.resets.issue(name);
    await this.#d.audit({
      event_type: "user.create",
      user_name: name,
      success: true,
      fields: { emitted_by: callerLabel(caller), roles, logins },
    });
    return {
      user: {
        name,
        roles,
        traits: logins.length > 0 ? { logins: { values: logins } } : {},
        webauthn_enrolled: false,
        locked_until_unix_ms: 0,
      },
      reset: this.#answer(reset),
    };
  }

  async remove(req: DeleteUserRequest__Output, caller: Caller): Promise<Record<string, never>> {
    const name = checkUserName(req.name);
    if (!this.#d.source.get("User", name)) throw new NotFoundError(`user ${name} not found`);
    await this.#writer().remove("User", name);
    // Auth's source subscription also revokes sessions and credentials on the delete event; doing
    // it here too makes the effect immediate for this call's answer.
    await this.#d.revokeSessions(name);
    await this.#d.resets.revoke(name);
    await this.#d.audit({
      event_type: "user.delete",
      user_name: name,
      success: true,
      fields: { emitted_by: callerLabel(caller) },
    });
    return {};
  }

  async reset(req: CreatePasswordResetRequest__Output, caller: Caller): Promise<PasswordResetToken> {
    const name = checkUserName(req.name);
    if (!this.#d.source.get("User", name)) throw new NotFoundError(`user ${name} not found`);
    const reset = await this.#d.resets.issue(name);
    const revoked = await this.#d.revokeSessions(name);
    await this.#d.audit({
      event_type: "user.password_reset.issue",
      user_name: name,
      success: true,
      fields: { emitted_by: callerLabel(caller), revoked_sessions: revoked },
    });
    return this.#answer(reset, revoked);
  }

  async resetPassword(req: ResetPasswordRequest__Output): Promise<ResetPasswordResponse> {
    const username = await this.#d.resets.consume(req.token, req.new_password);
    // Whoever held the old password loses their sessions with it.
    const revoked = await this.#d.revokeSessions(username);
    await this.#d.audit({
      event_type: "user.password_reset",
      user_name: username,
      success: true,
      fields: { emitted_by: "anonymous:reset-token", revoked_sessions: revoked },
    });
    return { username };
  }
}
