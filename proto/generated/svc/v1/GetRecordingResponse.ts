// Original file: svc/v1/auth.proto

import type {
  Recording as _svc_v1_Recording,
  Recording__Output as _svc_v1_Recording__Output,
} from "../../svc/v1/Recording.ts";

export interface GetRecordingResponse {
  metadata?: _svc_v1_Recording | null;
  chunk?: Buffer | Uint8Array | string;
  part?: "metadata" | "chunk";
}

export interface GetRecordingResponse__Output {
  metadata?: _svc_v1_Recording__Output | null;
  chunk?: Buffer;
  part?: "metadata" | "chunk";
}
