// Adapts core/ca's CertificateAuthorities (the only holder of CA private keys) to what the auth
// service needs: the user-certificate signer and the public material GetPublicKeys returns.
import type { CertificateAuthorities } from "../../core/ca/authorities.ts";
import type { PublicKeys } from "../../proto/generated/svc/v1/PublicKeys.ts";
import type { AuthKeyMaterial } from "./service.ts";

export function keyMaterialFrom(cas: CertificateAuthorities): AuthKeyMaterial {
  // Public material does not change while the process runs; encode it once.
  const m = cas.publicMaterial();
  const keys: PublicKeys = {
    user_ca_ssh_public_keys: [m.sshUserCa],
    host_ca_ssh_public_keys: [m.sshHostCa],
    host_ca_pems: [m.hostCaPem],
    spiffe_bundle_json: JSON.stringify(cas.spiffeBundle()),
    spiffe_jwks_json: JSON.stringify(m.spiffeJwks),
    app_jwt_jwks_json: JSON.stringify(m.appJwks),
    trust_domain: cas.trustDomain,
  };
  return { userCertSigner: cas.sshUserSigner, publicKeys: () => keys };
}
