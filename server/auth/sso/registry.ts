// Which protocol serves a connector type (each its own module, written against protocol.ts).
import { PreconditionFailedError } from "../../../core/errors.ts";
import type { ConnectorType } from "../../../core/resources/connector.ts";
import { githubProtocol } from "./github.ts";
import { oidcProtocol } from "./oidc.ts";
import type { ProtocolFactory } from "./protocol.ts";
import { samlProtocol } from "./saml.ts";

export type ProtocolRegistry = Partial<Record<ConnectorType, ProtocolFactory>>;

export const DEFAULT_PROTOCOLS: ProtocolRegistry = {
  oidc: oidcProtocol,
  github: githubProtocol,
  saml: samlProtocol,
};

export function protocolFactory(registry: ProtocolRegistry, type: ConnectorType): ProtocolFactory {
  const f = registry[type];
  if (!f) throw new PreconditionFailedError(`${type} is not available`);
  return f;
}
