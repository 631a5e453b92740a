// Original file: svc/v1/auth.proto

export interface WatchSessionsRequest {
  resume_from?: string;
}

export interface WatchSessionsRequest__Output {
  resume_from: string;
}
