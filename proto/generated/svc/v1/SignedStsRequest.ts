// Original file: svc/v1/auth.proto

export interface SignedStsRequest {
  http_request?: Buffer | Uint8Array | string;
}

export interface SignedStsRequest__Output {
  http_request: Buffer;
}
