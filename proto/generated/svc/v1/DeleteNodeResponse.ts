// Original file: svc/v1/auth.proto

export interface DeleteNodeResponse {
  id?: string;
  hostname?: string;
}

export interface DeleteNodeResponse__Output {
  id: string;
  hostname: string;
}
