// Original file: svc/v1/auth.proto

export interface DeleteNodeRequest {
  node?: string;
}

export interface DeleteNodeRequest__Output {
  node: string;
}
