// Original file: svc/v1/auth.proto

export interface GetJoinTokenUsageRequest {
  name?: string;
}

export interface GetJoinTokenUsageRequest__Output {
  name: string;
}
