// AuthorizeNodeLogin (docs/terminal.md): the per-node login decision the proxy asks before it
// opens a browser terminal. A node the user cannot see is NOT_FOUND (no existence oracle); a
// login the user's roles do not grant on that node's labels is PERMISSION_DENIED with the reason.
// The certificate the proxy then gets (IssueUserCerts) carries every login of the user, so this
// is where node-scoped logins (role allow.node_labels + allow.logins) are enforced for the web.
import { AccessDeniedError, BadParameterError, NotFoundError } from "../../core/errors.ts";
import type { AccessChecker } from "../../core/rbac/access-checker.ts";
import type { AuthorizeNodeLoginRequest__Output } from "../../proto/generated/svc/v1/AuthorizeNodeLoginRequest.ts";
import type { Node } from "../../proto/generated/svc/v1/Node.ts";
import { nodeView } from "./node-query.ts";
import type { NodeRecord } from "./nodes.ts";

export function authorizeNodeLogin(
  req: AuthorizeNodeLoginRequest__Output,
  checker: AccessChecker,
  nodes: readonly NodeRecord[],
): Node {
  if (!req.hostname) throw new BadParameterError("hostname is required");
  if (!req.login) throw new BadParameterError("login is required");
  const node = nodes.find((n) => n.hostname === req.hostname && checker.canSeeNode(n.labels));
  if (!node) throw new NotFoundError(`unknown node ${JSON.stringify(req.hostname)}`);
  const decision = checker.canLogin(req.login, node.labels);
  if (!decision.allowed) {
    throw new AccessDeniedError(
      `login ${JSON.stringify(req.login)} is not allowed on this node: ${decision.reason}`,
    );
  }
  // The node's view as listed (with its tunnel location: the proxy relays there).
  return nodeView(node);
}
