// Original file: svc/v1/auth.proto

export interface ListCertAuthoritiesRequest {}

export interface ListCertAuthoritiesRequest__Output {}
