// Reading a connector's referenced secret (OIDC/GitHub client secret, SAML signing PEM). Never
// inlined in the resource: `{file}` is read from auth's file system (embedded mode: relative to
// the data folder), `{secret_name,key}` through the Kubernetes API in auth's namespace with a
// single `get` (no list/watch: auth holds no copy of Secrets it does not use, docs/sso-security.md).
// Errors name the reference, never a value.
import { readFile } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import { PreconditionFailedError } from "../../../core/errors.ts";
import type { Connector } from "../../../core/resources/index.ts";
import type { ConnectorSecret } from "./protocol.ts";

export interface ConnectorSecrets {
  /** The connector's referenced secret, or undefined when it references none. */
  read(connector: Connector): Promise<ConnectorSecret | undefined>;
}

const MAX_SECRET_BYTES = 64 * 1024;

function unusable(connector: Connector, why: string): PreconditionFailedError {
  return new PreconditionFailedError(`connector ${connector.metadata.name}: ${why}`);
}

function value(connector: Connector, raw: string): ConnectorSecret {
  const v = raw.trim();
  if (v.length === 0 || v.length > MAX_SECRET_BYTES)
    throw unusable(connector, "its secret is empty or too large");
  return { value: v };
}

/**
 * File references (relative to `baseDir`), and Secret references when a Kubernetes client is
 * given (Kubernetes mode); a Secret reference without one is refused as not usable.
 */
export class ConnectorSecretReader implements ConnectorSecrets {
  readonly #baseDir: string;
  readonly #kube: { api: CoreV1Api; namespace: string } | undefined;

  constructor(o: { baseDir?: string; kube?: { kubeConfig: KubeConfig; namespace: string } }) {
    this.#baseDir = o.baseDir ?? process.cwd();
    this.#kube = o.kube
      ? { api: o.kube.kubeConfig.makeApiClient(CoreV1Api), namespace: o.kube.namespace }
      : undefined;
  }

  async read(connector: Connector): Promise<ConnectorSecret | undefined> {
    const ref = connector.spec.client_secret_ref;
    if (!ref) return undefined;
    if (ref.file !== undefined) {
      const path = isAbsolute(ref.file) ? ref.file : join(this.#baseDir, ref.file);
      try {
        return value(connector, await readFile(path, "utf8"));
      } catch (err) {
        if (err instanceof PreconditionFailedError) throw err;
        const code = (err as NodeJS.ErrnoException).code ?? "error";
        throw unusable(connector, `cannot read its client_secret_ref file (${code})`);
      }
    }
    if (ref.secret_name === undefined || ref.key === undefined)
      throw unusable(connector, "client_secret_ref needs secret_name and key, or file");
    if (!this.#kube) throw unusable(connector, "a Secret reference needs auth in Kubernetes mode");
    let data: Record<string, string> | undefined;
    try {
      const secret = await this.#kube.api.readNamespacedSecret({
        name: ref.secret_name,
        namespace: this.#kube.namespace,
      });
      data = secret.data;
    } catch {
      throw unusable(connector, `Secret "${ref.secret_name}" cannot be read`);
    }
    const b64 = data?.[ref.key];
    if (b64 === undefined) throw unusable(connector, `Secret "${ref.secret_name}" has no key "${ref.key}"`);
    return value(connector, Buffer.from(b64, "base64").toString("utf8"));
  }
}
