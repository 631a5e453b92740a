// The two RPCs the operator calls (docs/operator.md): RevokeUserSessions before it releases a
// deleted User's finalizer, and GetJoinTokenUsage for a JoinToken's `Used` phase. Auth answers
// from its own state (sessions and redemption records in the backend); the operator never reads
// that store itself.
import type { Backend } from "../../core/backend/backend.ts";
import { BadParameterError, isNotFound, NotFoundError } from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import type { ResourceSource } from "../../core/sources/source.ts";
import type { GetJoinTokenUsageRequest__Output } from "../../proto/generated/svc/v1/GetJoinTokenUsageRequest.ts";
import type { JoinTokenUsage } from "../../proto/generated/svc/v1/JoinTokenUsage.ts";
import type { RevokeUserSessionsRequest__Output } from "../../proto/generated/svc/v1/RevokeUserSessionsRequest.ts";
import type { RevokeUserSessionsResponse } from "../../proto/generated/svc/v1/RevokeUserSessionsResponse.ts";
import { type Caller, callerLabel } from "./caller.ts";
import { joinTokenRedemptionKey } from "./join-agent.ts";

export interface OperatorHooksDeps {
  backend: Backend;
  source: ResourceSource;
  sessions: { revokeAll(username: string): Promise<number> };
  audit(event: {
    event_type: string;
    user_name: string;
    success: boolean;
    fields: JsonObject;
  }): Promise<unknown>;
}

const NAME = /^[A-Za-z0-9@._+-]{1,253}$/;

export class OperatorHooks {
  readonly #d: OperatorHooksDeps;

  constructor(deps: OperatorHooksDeps) {
    this.#d = deps;
  }

  /** Idempotent: an unknown user, or one without sessions, revokes nothing. */
  async revokeUserSessions(
    req: RevokeUserSessionsRequest__Output,
    caller: Caller,
  ): Promise<RevokeUserSessionsResponse> {
    if (!NAME.test(req.username)) throw new BadParameterError("username is malformed");
    const n = await this.#d.sessions.revokeAll(req.username);
    await this.#d.audit({
      event_type: "user.sessions_revoked",
      user_name: req.username,
      success: true,
      fields: { emitted_by: callerLabel(caller), revoked_sessions: n },
    });
    return { revoked_sessions: n };
  }

  /** The redemption of the token auth knows by that name (its current secret). */
  async joinTokenUsage(req: GetJoinTokenUsageRequest__Output): Promise<JoinTokenUsage> {
    if (!NAME.test(req.name)) throw new BadParameterError("name is malformed");
    const token = this.#d.source.get("JoinToken", req.name);
    if (!token) throw new NotFoundError(`token ${req.name} not found`);
    try {
      const item = await this.#d.backend.get(joinTokenRedemptionKey(token));
      const v = item.value as JsonObject;
      const at = Date.parse(String(v["at"] ?? ""));
      return {
        used: true,
        used_by: typeof v["hostname"] === "string" ? v["hostname"] : "",
        used_by_id: typeof v["agent_id"] === "string" ? v["agent_id"] : "",
        used_at_unix_ms: Number.isFinite(at) ? at : 0,
      };
    } catch (err) {
      if (isNotFound(err)) return { used: false, used_by: "", used_by_id: "", used_at_unix_ms: 0 };
      throw err;
    }
  }
}
