// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface JoinTokenInfo {
  name?: string;
  roles?: string[];
  join_method?: string;
  expires_unix_ms?: number | string | Long;
  node_labels?: { [key: string]: string };
  bot_name?: string;
}

export interface JoinTokenInfo__Output {
  name: string;
  roles: string[];
  join_method: string;
  expires_unix_ms: number;
  node_labels: { [key: string]: string };
  bot_name: string;
}
