// Original file: svc/v1/auth.proto

export interface DeleteWebAuthnDeviceResponse {}

export interface DeleteWebAuthnDeviceResponse__Output {}
