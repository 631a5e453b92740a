// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface UploadRecordingResponse {
  id?: string;
  size_bytes?: number | string | Long;
}

export interface UploadRecordingResponse__Output {
  id: string;
  size_bytes: number;
}
