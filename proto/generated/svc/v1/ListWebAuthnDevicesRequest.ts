// Original file: svc/v1/auth.proto

export interface ListWebAuthnDevicesRequest {}

export interface ListWebAuthnDevicesRequest__Output {}
