// Builds the three machine-identity handlers AuthService takes (iamJoin, agentIdentities,
// spiffe) from the cluster's CAs, so whoever starts auth spreads one object into its deps:
//   startAuthServer({ ...deps, ...machineIdentityHandlers({ ...deps, cas, agentJoin }) })
import type { Logger } from "pino";
import type { Backend } from "../../core/backend/backend.ts";
import type { CertificateAuthorities } from "../../core/ca/authorities.ts";
import type { Clock } from "../../core/clock.ts";
import type { StsTransport } from "../../core/iam/index.ts";
import type { ResourceSource, ResourceWriter } from "../../core/sources/source.ts";
import { AgentIdentityService } from "./bot-identity.ts";
import { type AdmittedNodeIssuer, IamJoin } from "./join-iam.ts";
import { keyMaterialFrom } from "./keys.ts";
import { managedBySvcctl } from "./managed-by.ts";
import { SpiffeService } from "./spiffe.ts";

export interface MachineIdentityOptions {
  backend: Backend;
  source: ResourceSource;
  /** For CreateAgentIdentity / DeleteAgentIdentity (the folder or Kubernetes source). */
  writer?: ResourceWriter;
  clock: Clock;
  logger: Logger;
  cas: CertificateAuthorities;
  /** The node join's credential issuer (AgentJoin); without it the IAM join is not enabled. */
  agentJoin?: AdmittedNodeIssuer;
  /** STS endpoints the IAM join may forward to; default every AWS STS endpoint. */
  stsEndpoints?: readonly string[];
  stsTransport?: StsTransport;
  /** `iss` of JWT-SVIDs (the proxy's oidc_issuer_url). */
  jwtIssuer?: string;
}

export interface MachineIdentityHandlers {
  iamJoin?: IamJoin;
  agentIdentities: AgentIdentityService;
  spiffe: SpiffeService;
}

export function machineIdentityHandlers(o: MachineIdentityOptions): MachineIdentityHandlers {
  const keys = keyMaterialFrom(o.cas);
  const agentIdentities = new AgentIdentityService({
    backend: o.backend,
    source: o.source,
    ...(o.writer ? { writer: managedBySvcctl(o.writer) } : {}),
    clock: o.clock,
    logger: o.logger,
    userCertSigner: o.cas.sshUserSigner,
    hostCa: o.cas.hostCa,
    publicKeys: keys.publicKeys,
  });
  const spiffe = new SpiffeService({
    backend: o.backend,
    source: o.source,
    clock: o.clock,
    logger: o.logger,
    authority: o.cas,
    userCertSigner: o.cas.sshUserSigner,
    bots: agentIdentities,
    ...(o.jwtIssuer ? { jwtIssuer: o.jwtIssuer } : {}),
  });
  const iamJoin = o.agentJoin
    ? new IamJoin({
        backend: o.backend,
        source: o.source,
        clock: o.clock,
        logger: o.logger,
        nodes: o.agentJoin,
        ...(o.stsEndpoints ? { stsEndpoints: o.stsEndpoints } : {}),
        ...(o.stsTransport ? { stsTransport: o.stsTransport } : {}),
      })
    : undefined;
  return { ...(iamJoin ? { iamJoin } : {}), agentIdentities, spiffe };
}
