// Original file: svc/v1/auth.proto

export interface DeleteJoinTokenRequest {
  name?: string;
}

export interface DeleteJoinTokenRequest__Output {
  name: string;
}
