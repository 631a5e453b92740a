// What an unauthenticated login page may learn about a connector: never settings or secrets.

import type { ConnectorType } from "./connector.ts";
import type { Connector } from "./kinds.ts";

export interface PublicConnectorView {
  name: string;
  type: ConnectorType;
  display_name: string;
}

export function publicConnectorView(c: Connector): PublicConnectorView {
  return { name: c.metadata.name, type: c.spec.type, display_name: c.spec.display_name };
}
