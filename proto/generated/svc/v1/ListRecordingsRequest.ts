// Original file: svc/v1/auth.proto

export interface ListRecordingsRequest {
  limit?: number;
  offset?: number;
  user?: string;
  protocol?: string;
}

export interface ListRecordingsRequest__Output {
  limit: number;
  offset: number;
  user: string;
  protocol: string;
}
