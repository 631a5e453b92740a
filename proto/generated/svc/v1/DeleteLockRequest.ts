// Original file: svc/v1/auth.proto

export interface DeleteLockRequest {
  name?: string;
}

export interface DeleteLockRequest__Output {
  name: string;
}
