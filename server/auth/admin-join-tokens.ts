// Admin RPCs behind `svcctl tokens add|ls|rm` (docs/cli.md): node join tokens as JoinToken
// resources, written through auth's ResourceWriter. The secret is 256 random bits shown once;
// the resource keeps sha256(secret) hex, the form RegisterAgent checks (join-agent.ts).
import { randomBytes } from "node:crypto";
import type { Clock } from "../../core/clock.ts";
import { BadParameterError, NotFoundError, NotImplementedError } from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import { API_VERSION, type JoinToken } from "../../core/resources/index.ts";
import type { ResourceSource, ResourceWriter } from "../../core/sources/source.ts";
import type { CreateJoinTokenRequest__Output } from "../../proto/generated/svc/v1/CreateJoinTokenRequest.ts";
import type { CreateJoinTokenResponse } from "../../proto/generated/svc/v1/CreateJoinTokenResponse.ts";
import type { DeleteJoinTokenRequest__Output } from "../../proto/generated/svc/v1/DeleteJoinTokenRequest.ts";
import type { JoinTokenInfo } from "../../proto/generated/svc/v1/JoinTokenInfo.ts";
import type { ListJoinTokensResponse } from "../../proto/generated/svc/v1/ListJoinTokensResponse.ts";
import { type Caller, callerLabel } from "./caller.ts";
import { joinSecretHash } from "./join-agent.ts";

export const DEFAULT_JOIN_TOKEN_TTL_MS = 60 * 60 * 1000;
const MAX_JOIN_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;
const TOKEN_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const LABEL_KEY = /^[A-Za-z0-9]([A-Za-z0-9_./-]{0,126}[A-Za-z0-9])?$/;

export interface AdminJoinTokensDeps {
  source: ResourceSource;
  writer?: ResourceWriter;
  clock: Clock;
  audit(event: {
    event_type: string;
    user_name: string;
    success: boolean;
    fields: JsonObject;
  }): Promise<unknown>;
}

export function joinTokenInfo(t: JoinToken): JoinTokenInfo {
  return {
    name: t.metadata.name,
    roles: [...t.spec.roles],
    join_method: t.spec.join_method,
    expires_unix_ms: Date.parse(t.spec.expires),
    node_labels: { ...(t.spec.node_labels ?? {}) },
    bot_name: t.spec.bot_name ?? "",
  };
}

export class AdminJoinTokens {
  readonly #d: AdminJoinTokensDeps;

  constructor(deps: AdminJoinTokensDeps) {
    this.#d = deps;
  }

  #writer(): ResourceWriter {
    if (!this.#d.writer) throw new NotImplementedError("this auth server cannot write resources");
    return this.#d.writer;
  }

  async create(req: CreateJoinTokenRequest__Output, caller: Caller): Promise<CreateJoinTokenResponse> {
    const name = req.name === "" ? `node-${randomBytes(8).toString("hex")}` : req.name;
    if (!TOKEN_NAME.test(name))
      throw new BadParameterError("token name must be lower-case letters, digits and '-' (at most 63)");
    if (!Number.isInteger(req.ttl_seconds) || req.ttl_seconds < 0)
      throw new BadParameterError("ttl_seconds must be >= 0");
    const ttlMs = req.ttl_seconds === 0 ? DEFAULT_JOIN_TOKEN_TTL_MS : req.ttl_seconds * 1000;
    if (ttlMs > MAX_JOIN_TOKEN_TTL_MS) throw new BadParameterError("a join token lives at most 30 days");
    const labels = req.node_labels ?? {};
    for (const [k, v] of Object.entries(labels)) {
      if (!LABEL_KEY.test(k)) throw new BadParameterError(`label key ${JSON.stringify(k)} is malformed`);
      if (v.length > 1024) throw new BadParameterError(`label ${k} is too long`);
    }
    // Never overwrite: an existing token of that name may be in use.
    if (this.#d.source.get("JoinToken", name)) throw new BadParameterError(`token ${name} already exists`);
    const secret = randomBytes(32).toString("base64url");
    const expires = new Date(this.#d.clock.now().getTime() + ttlMs);
    const token: JoinToken = {
      apiVersion: API_VERSION,
      kind: "JoinToken",
      metadata: { name },
      spec: {
        roles: ["node"],
        join_method: "token",
        secret_hash: joinSecretHash(secret),
        expires: expires.toISOString(),
        ...(Object.keys(labels).length > 0 ? { node_labels: { ...labels } } : {}),
      },
    };
    await this.#writer().apply(token);
    await this.#d.audit({
      event_type: "join_token.create",
      user_name: caller.kind === "user" ? caller.username : "",
      success: true,
      fields: { emitted_by: callerLabel(caller), token: name, expires: expires.toISOString() },
    });
    return { info: joinTokenInfo(token), token: `${name}.${secret}` };
  }

  list(): ListJoinTokensResponse {
    const tokens = this.#d.source
      .list("JoinToken")
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))
      .map(joinTokenInfo);
    return { tokens };
  }

  async remove(req: DeleteJoinTokenRequest__Output, caller: Caller): Promise<Record<string, never>> {
    if (!this.#d.source.get("JoinToken", req.name)) throw new NotFoundError(`token ${req.name} not found`);
    await this.#writer().remove("JoinToken", req.name);
    await this.#d.audit({
      event_type: "join_token.delete",
      user_name: caller.kind === "user" ? caller.username : "",
      success: true,
      fields: { emitted_by: callerLabel(caller), token: req.name },
    });
    return {};
  }
}
