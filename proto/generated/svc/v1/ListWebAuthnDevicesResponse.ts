// Original file: svc/v1/auth.proto

import type {
  WebAuthnDevice as _svc_v1_WebAuthnDevice,
  WebAuthnDevice__Output as _svc_v1_WebAuthnDevice__Output,
} from "../../svc/v1/WebAuthnDevice.ts";

export interface ListWebAuthnDevicesResponse {
  devices?: _svc_v1_WebAuthnDevice[];
}

export interface ListWebAuthnDevicesResponse__Output {
  devices: _svc_v1_WebAuthnDevice__Output[];
}
