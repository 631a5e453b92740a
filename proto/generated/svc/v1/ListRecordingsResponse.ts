// Original file: svc/v1/auth.proto

import type {
  Recording as _svc_v1_Recording,
  Recording__Output as _svc_v1_Recording__Output,
} from "../../svc/v1/Recording.ts";
import type { Long } from "@grpc/proto-loader";

export interface ListRecordingsResponse {
  items?: _svc_v1_Recording[];
  total_count?: number | string | Long;
}

export interface ListRecordingsResponse__Output {
  items: _svc_v1_Recording__Output[];
  total_count: number;
}
