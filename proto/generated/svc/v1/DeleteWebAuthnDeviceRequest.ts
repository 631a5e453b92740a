// Original file: svc/v1/auth.proto

export interface DeleteWebAuthnDeviceRequest {
  id?: string;
}

export interface DeleteWebAuthnDeviceRequest__Output {
  id: string;
}
