// Original file: svc/v1/auth.proto

export interface RenameWebAuthnDeviceRequest {
  id?: string;
  name?: string;
}

export interface RenameWebAuthnDeviceRequest__Output {
  id: string;
  name: string;
}
