// Original file: svc/v1/auth.proto

export interface ExportKrlResponse {
  krl?: Buffer | Uint8Array | string;
  digest?: string;
}

export interface ExportKrlResponse__Output {
  krl: Buffer;
  digest: string;
}
