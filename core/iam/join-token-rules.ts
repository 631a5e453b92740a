// Which JoinTokens an IAM join may use: node tokens with join_method iam. The spec keeps bots out
// of the IAM join, so a token naming the bot role is refused before any challenge is issued.
import { AccessDeniedError } from "../errors.ts";
import type { IamAllowRule, JoinTokenSpec } from "../resources/join-token.ts";

/** The token's allow rules for an IAM node join; AccessDeniedError when the token is not one. */
export function iamAllowRulesOf(
  spec: Pick<JoinTokenSpec, "join_method" | "roles" | "allow">,
): IamAllowRule[] {
  if (spec.join_method !== "iam")
    throw new AccessDeniedError("the join token is not for the IAM join method");
  if (spec.roles.includes("bot")) throw new AccessDeniedError("IAM join is not supported for bots");
  if (!spec.roles.includes("node")) throw new AccessDeniedError("the join token does not allow a node join");
  if (!spec.allow || spec.allow.length === 0)
    throw new AccessDeniedError("the join token has no IAM allow rules");
  return spec.allow;
}
