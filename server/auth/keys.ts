// Adapts core/ca's CertificateAuthorities (the only holder of CA private keys) to what the auth
// service needs: the user-certificate signer and the public material GetPublicKeys returns.
import type { CertificateAuthorities } from "../../core/ca/authorities.ts";
import type { PublicKeys } from "../../proto/generated/svc/v1/PublicKeys.ts";
import type { AuthKeyMaterial } from "./service.ts";

export function keyMaterialFrom(cas: CertificateAuthorities): AuthKeyMaterial {
  // Public material changes with a CA rotation's phase: encoded on each change, not per call.
  const encode = (): PublicKeys => {
    const m = cas.publicMaterial();
    return {
      user_ca_ssh_public_keys: m.sshUserCas,
      host_ca_ssh_public_keys: m.sshHostCas,
      host_ca_pems: m.hostCaPems,
      spiffe_bundle_json: JSON.stringify(cas.spiffeBundle()),
      spiffe_jwks_json: JSON.stringify(m.spiffeJwks),
      app_jwt_jwks_json: JSON.stringify(m.appJwks),
      trust_domain: cas.trustDomain,
    };
  };
  let keys = encode();
  cas.onChange(() => {
    keys = encode();
  });
  return { userCertSigner: cas.sshUserSigner, publicKeys: () => keys };
}
