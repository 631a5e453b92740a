// Original file: svc/v1/auth.proto

import type {
  CertAuthorityStatus as _svc_v1_CertAuthorityStatus,
  CertAuthorityStatus__Output as _svc_v1_CertAuthorityStatus__Output,
} from "../../svc/v1/CertAuthorityStatus.ts";

export interface ListCertAuthoritiesResponse {
  authorities?: _svc_v1_CertAuthorityStatus[];
}

export interface ListCertAuthoritiesResponse__Output {
  authorities: _svc_v1_CertAuthorityStatus__Output[];
}
