// Original file: svc/v1/auth.proto

import type {
  RecordingMetadata as _svc_v1_RecordingMetadata,
  RecordingMetadata__Output as _svc_v1_RecordingMetadata__Output,
} from "../../svc/v1/RecordingMetadata.ts";

export interface UploadRecordingRequest {
  metadata?: _svc_v1_RecordingMetadata | null;
  chunk?: Buffer | Uint8Array | string;
  part?: "metadata" | "chunk";
}

export interface UploadRecordingRequest__Output {
  metadata?: _svc_v1_RecordingMetadata__Output | null;
  chunk?: Buffer;
  part?: "metadata" | "chunk";
}
