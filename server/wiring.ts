// Glue shared by every way of running auth and proxy (embedded `svcd start`, `svcd auth`,
// `svcd proxy`): the CA adapter auth needs and the TLS identities the host CA issues to services.
import type { CertificateAuthorities } from "../core/ca/authorities.ts";
import {
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  serviceIdentityUri,
} from "../core/certs/x509.ts";
import type { Clock } from "../core/clock.ts";
import type { AuthKeyMaterial } from "./auth/service.ts";

/** What auth signs with and publishes, taken from the loaded certificate authorities. */
export function authKeyMaterial(cas: CertificateAuthorities): AuthKeyMaterial {
  return {
    userCertSigner: cas.sshUserSigner,
    publicKeys: () => ({
      // Every trusted key (several during a CA rotation), the signing one first.
      user_ca_ssh_public_keys: cas.trustedUserCaKeys(),
      host_ca_ssh_public_keys: cas.trustedHostCaKeys(),
      host_ca_pems: cas.trustedHostCaPems(),
      spiffe_bundle_json: JSON.stringify(cas.spiffeBundle()),
      spiffe_jwks_json: JSON.stringify(cas.spiffeJwks()),
      app_jwt_jwks_json: JSON.stringify(cas.appJwks()),
      trust_domain: cas.trustDomain,
    }),
  };
}

export interface TlsIdentity {
  certPem: string;
  keyPem: string;
}

const IP = /^(\d{1,3}(\.\d{1,3}){3}|[0-9a-f:]+)$/i;

/** A server certificate for `hosts` (names and IPs, always plus localhost and loopback). */
export async function issueServerIdentity(
  cas: CertificateAuthorities,
  o: { commonName: string; hosts: string[]; clock: Clock },
): Promise<TlsIdentity> {
  const all = [...new Set([...o.hosts, "localhost", "127.0.0.1", "::1"].filter((h) => h && h !== "0.0.0.0"))];
  const key = generateEcdsaP256();
  const certPem = await issueTlsServerCert(cas.hostCa, {
    publicKey: key.publicKey,
    commonName: o.commonName,
    dnsNames: all.filter((h) => !IP.test(h)),
    ips: all.filter((h) => IP.test(h)),
    clock: o.clock,
  });
  return { certPem, keyPem: privateKeyToPem(key.privateKey) };
}

/** A client certificate naming a service (e.g. the proxy) for its gRPC calls to auth. */
export async function issueServiceClientIdentity(
  cas: CertificateAuthorities,
  o: { role: string; name: string; clock: Clock },
): Promise<TlsIdentity> {
  const key = generateEcdsaP256();
  const certPem = await issueTlsClientCert(cas.hostCa, {
    publicKey: key.publicKey,
    commonName: o.role,
    uri: serviceIdentityUri(o.role, o.name),
    clock: o.clock,
  });
  return { certPem, keyPem: privateKeyToPem(key.privateKey) };
}
