// Original file: svc/v1/auth.proto

export interface GetRecordingRequest {
  id?: string;
}

export interface GetRecordingRequest__Output {
  id: string;
}
