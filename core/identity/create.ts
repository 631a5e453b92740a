// `svcctl agent-identities add`: one AgentIdentity (the bot) and one one-time bootstrap JoinToken
// (roles [bot], bot_name, join_method token, only sha256(secret) stored). The token string
// "<token name>.<secret>" is returned once and never again. Written through the ResourceWriter, so
// it is a YAML manifest in embedded mode and a custom resource in Kubernetes mode.
import { createHash, randomBytes } from "node:crypto";
import type { Clock } from "../clock.ts";
import { parseDuration } from "../duration.ts";
import { AlreadyExistsError, BadParameterError } from "../errors.ts";
import {
  type AgentIdentity,
  API_VERSION,
  DEFAULT_CERT_TTL,
  DNS_SUBDOMAIN_MAX,
  DNS_SUBDOMAIN_PATTERN,
  type JoinToken,
  MAX_CERT_TTL,
} from "../resources/index.ts";
import type { ResourceSource, ResourceWriter } from "../sources/source.ts";

export const DEFAULT_BOOTSTRAP_TOKEN_TTL_MS = 60 * 60_000;
export const MAX_BOOTSTRAP_TOKEN_TTL_MS = 7 * 24 * 60 * 60_000;

export interface CreateAgentIdentityInput {
  name: string;
  roles: readonly string[];
  /** certificate lifetime, e.g. "1h" (default) .. "24h" */
  ttl?: string;
  allowWorkloadSvids?: boolean;
  /** bootstrap token lifetime; default 1 h, at most 7 days */
  tokenTtlMs?: number;
}

export interface CreatedAgentIdentity {
  identity: AgentIdentity;
  tokenResource: JoinToken;
  /** "<token name>.<secret>": show once, never store */
  token: string;
  tokenExpires: Date;
}

export interface CreateAgentIdentityDeps {
  writer: ResourceWriter;
  /** to refuse an existing bot and unknown roles */
  source: ResourceSource;
  clock: Clock;
}

const NAME = new RegExp(DNS_SUBDOMAIN_PATTERN);

function checkInput(
  input: CreateAgentIdentityInput,
  source: ResourceSource,
): { ttl: string; tokenTtlMs: number } {
  if (typeof input.name !== "string" || input.name.length > DNS_SUBDOMAIN_MAX || !NAME.test(input.name))
    throw new BadParameterError("name must be a DNS-1123 subdomain (lower-case letters, digits, '-', '.')");
  if (!Array.isArray(input.roles) || input.roles.length === 0)
    throw new BadParameterError("at least one role is required");
  const missing = input.roles.filter((r) => source.get("Role", r) === undefined);
  if (missing.length > 0) throw new BadParameterError(`unknown role(s): ${missing.join(", ")}`);
  const ttl = input.ttl === undefined || input.ttl === "" ? DEFAULT_CERT_TTL : input.ttl;
  let ttlMs: number;
  try {
    ttlMs = parseDuration(ttl);
  } catch {
    throw new BadParameterError(`ttl ${JSON.stringify(ttl.slice(0, 32))} is not a duration like 1h or 30m`);
  }
  if (ttlMs < 60_000 || ttlMs > parseDuration(MAX_CERT_TTL))
    throw new BadParameterError(`ttl must be between 1m and ${MAX_CERT_TTL}`);
  const tokenTtlMs = input.tokenTtlMs ?? DEFAULT_BOOTSTRAP_TOKEN_TTL_MS;
  if (!Number.isInteger(tokenTtlMs) || tokenTtlMs < 60_000 || tokenTtlMs > MAX_BOOTSTRAP_TOKEN_TTL_MS)
    throw new BadParameterError("token ttl must be between 1 minute and 7 days");
  return { ttl, tokenTtlMs };
}

/** Creates the bot and its one-time bootstrap token; AlreadyExistsError when the bot exists. */
export async function createAgentIdentity(
  deps: CreateAgentIdentityDeps,
  input: CreateAgentIdentityInput,
): Promise<CreatedAgentIdentity> {
  const { ttl, tokenTtlMs } = checkInput(input, deps.source);
  if (deps.source.get("AgentIdentity", input.name))
    throw new AlreadyExistsError(`agent identity ${input.name} already exists`);
  const identity: AgentIdentity = {
    apiVersion: API_VERSION,
    kind: "AgentIdentity",
    metadata: { name: input.name },
    spec: {
      roles: [...input.roles],
      cert_ttl: ttl,
      allow_workload_svids: input.allowWorkloadSvids === true,
    },
  };
  const secret = randomBytes(32).toString("base64url");
  const tokenName = `bot-${randomBytes(8).toString("hex")}`;
  const tokenExpires = new Date(deps.clock.now().getTime() + tokenTtlMs);
  const tokenResource: JoinToken = {
    apiVersion: API_VERSION,
    kind: "JoinToken",
    metadata: { name: tokenName },
    spec: {
      roles: ["bot"],
      join_method: "token",
      secret_hash: createHash("sha256").update(secret, "utf8").digest("hex"),
      bot_name: input.name,
      expires: tokenExpires.toISOString(),
    },
  };
  // The bot first: a token must never point at a bot that does not exist.
  await deps.writer.apply(identity);
  await deps.writer.apply(tokenResource);
  return { identity, tokenResource, token: `${tokenName}.${secret}`, tokenExpires };
}
